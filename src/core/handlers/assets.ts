/** Handlers of AssetsApi and AssetApi: the stored assets as SDK Asset records. */
import type { OperationContext } from '../context.js';
import { json, notFound } from '../http.js';
import { assetWire } from '../models/asset.js';
import { uuid } from '../validate.js';
import { transferables } from './common.js';

export async function assetsSnapshot(context: OperationContext) {
  const withText = transferables(context.url);
  const assets = await context.service.storage.listAssets();
  return json({ iterable: assets.map((asset) => assetWire(asset, withText)) });
}

/** assetsSpecificAssetSnapshot (GET /assets/{asset}) and assetSnapshot (GET /asset/{asset}). */
export async function assetSnapshot(context: OperationContext) {
  const withText = transferables(context.url);
  const id = uuid(context.params.asset, 'The asset id');
  const asset = await context.service.storage.getAsset(id);
  if (!asset) throw notFound(`No asset with id ${id}.`);
  return json(assetWire(asset, withText));
}

export async function assetsIdentifiersSnapshot({ service }: OperationContext) {
  const { ids } = await service.storage.listIds('asset');
  return json({ iterable: ids.map((id) => ({ id })) });
}
