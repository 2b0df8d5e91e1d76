/**
 * Handlers of AssetsApi and AssetApi (assets read, created, drafted, updated, deleted; tags and
 * websites put on and taken off) and FormatApi (a format read, its value edited). Every write is
 * one transaction, announced on the assets stream and recorded as an activity.
 */
import type { OperationContext } from '../context.js';
import { badRequest, notFound, readJson, reply } from '../http.js';
import {
  activity,
  assetWire,
  draftWire,
  formatWire,
  parseFormatValue,
  parseSeed,
  updateAsset,
  updatedAssetId,
  withValue,
} from '../models/asset.js';
import type { AssetEdit, StoredAsset } from '../../storage/storage.js';
import { object, uuid } from '../validate.js';
import { clock, publish, transferables } from './common.js';

const assetId = (context: OperationContext) => uuid(context.params.asset, 'The asset id');

/** `transferable` (FormatApi's spelling): absent means true; only "true" and "false". */
function transferable(url: URL): boolean {
  const values = url.searchParams.getAll('transferable');
  if (values.length === 0) return true;
  if (values.length === 1 && (values[0] === 'true' || values[0] === 'false')) return values[0] === 'true';
  throw badRequest(`The transferable query parameter must be true or false; got ${JSON.stringify(values.join(',')).slice(0, 200)}.`);
}

/** The application an asset's activities are recorded for: the one that made its original format. */
const madeBy = (whole: StoredAsset) =>
  whole.formats.find((f) => f.id === whole.record.original)?.application ?? whole.formats[0]!.application;

export async function assetsSnapshot(context: OperationContext) {
  const withText = transferables(context.url);
  const assets = await context.service.storage.listAssets();
  return reply({ iterable: assets.map((asset) => assetWire(asset, withText)) });
}

/** assetsSpecificAssetSnapshot (GET /assets/{asset}) and assetSnapshot (GET /asset/{asset}). */
export async function assetSnapshot(context: OperationContext) {
  const withText = transferables(context.url);
  const id = assetId(context);
  const asset = await context.service.storage.getAsset(id);
  if (!asset) throw notFound(`No asset with id ${id}.`);
  return reply(assetWire(asset, withText));
}

export async function assetsIdentifiersSnapshot({ service }: OperationContext) {
  const { ids } = await service.storage.listIds('asset');
  return reply({ iterable: ids.map((id) => ({ id })) });
}

/** assetFormats (GET /asset/{asset}/formats) and assetsSpecificAssetFormatsSnapshot (GET /assets/{asset}/formats). */
export async function assetFormats(context: OperationContext) {
  const withText = transferables(context.url);
  const id = assetId(context);
  const asset = await context.service.storage.getAsset(id);
  if (!asset) throw notFound(`No asset with id ${id}.`);
  return reply({ iterable: asset.formats.map((format) => formatWire(format, asset, withText)) });
}

/** The same operations under the AssetsApi's names. */
export { assetSnapshot as assetsSpecificAssetSnapshot, assetFormats as assetsSpecificAssetFormatsSnapshot };

export async function assetsCreateNewAsset(context: OperationContext) {
  const withText = transferables(context.url);
  const body = await readJson(context.request, context.service.maxBodyBytes);
  return reply(assetWire(await createAssetFromSeed(context, body), withText));
}

/**
 * Makes the asset a Seed (or a bare SeededAsset) describes, with its creation's activity, and
 * answers it as stored (what another operation that creates an asset from a seed uses too).
 */
export async function createAssetFromSeed(context: OperationContext, body: unknown): Promise<StoredAsset> {
  const time = clock(context);
  const { asset } = parseSeed(body, time, time.newId());
  const created = activity(
    time,
    { asset: asset.record.id, pair: 'assetCreated', value: 'an_asset_was_created' },
    asset.formats[0]!.application,
  );
  publish(context, await context.service.storage.createAsset(asset, [created]));
  // Tags and websites of the same text (URL) as stored ones are those: answer what was stored.
  const stored = asset.tags.length || asset.websites.length ? await context.service.storage.getAsset(asset.record.id) : asset;
  return stored ?? asset;
}

export async function assetsDraft(context: OperationContext) {
  const withText = transferables(context.url);
  const body = await readJson(context.request, context.service.maxBodyBytes);
  const time = clock(context);
  return reply(draftWire(parseSeed(body, time, time.newId()), withText));
}

export async function assetUpdate(context: OperationContext) {
  const withText = transferables(context.url);
  const body = await readJson(context.request, context.service.maxBodyBytes);
  const id = updatedAssetId(body);
  const time = clock(context);
  const result = await context.service.storage.editAsset({ asset: id }, (current) => {
    const { record, annotations, changed } = updateAsset(object(body, 'asset'), current, time);
    const pair = changed.name
      ? (['assetNameUpdated', 'an_asset_was_renamed_by_the_user'] as const)
      : changed.description
        ? (['assetDescriptionUpdated', 'an_asset_was_redescribed_by_the_user'] as const)
        : (['assetUpdated', 'an_asset_was_updated'] as const);
    const changedAnything = changed.name || changed.description || changed.annotations || changed.favorited;
    return {
      record,
      putAnnotations: annotations,
      activities: changedAnything ? [activity(time, { asset: id, pair: pair[0], value: pair[1] }, madeBy(current))] : [],
    };
  });
  if (!result) throw notFound(`No asset with id ${id}.`);
  publish(context, result.changes);
  return reply(assetWire(result.state, withText));
}

/** assetsDeleteAsset: the asset, its formats and annotations, its place on tags and websites; answers its id. */
export async function assetsDeleteAsset(context: OperationContext) {
  const id = assetId(context);
  const time = clock(context);
  const deleted = activity(time, { asset: id, pair: 'assetDeleted', value: 'an_asset_was_deleted', keep: false });
  const changes = await context.service.storage.deleteAsset(id, [deleted]);
  if (!changes) throw notFound(`No asset with id ${id}.`);
  publish(context, changes);
  return reply(id, { type: 'text' });
}

export async function formatSnapshot(context: OperationContext) {
  const withValue = transferable(context.url);
  const id = uuid(context.params.format, 'The format id');
  const asset = await context.service.storage.findAsset({ format: id });
  const format = asset?.formats.find((f) => f.id === id);
  if (!asset || !format) throw notFound(`No format with id ${id}.`);
  return reply(formatWire(format, asset, withValue));
}

/** formatUpdateValue: a format's new text (or bytes); its asset is updated with it. */
export async function formatUpdateValue(context: OperationContext) {
  const withText = transferable(context.url);
  const value = parseFormatValue(await readJson(context.request, context.service.maxBodyBytes));
  const time = clock(context);
  const result = await context.service.storage.editAsset({ format: value.id }, (current) => {
    if (value.asset && value.asset !== current.record.id) {
      throw badRequest(`format ${value.id} belongs to asset ${current.record.id}, not to asset ${value.asset}.`);
    }
    const format = current.formats.find((f) => f.id === value.id)!;
    if (value.text === undefined && format.text !== undefined)
      throw badRequest(`format ${value.id} holds text: send its new value as text (fragment.string.raw).`);
    const updated = withValue(format, value, time);
    return {
      record: { ...current.record, updated: updated.updated },
      putFormats: [updated],
      activities: [
        activity(
          time,
          { asset: current.record.id, pair: 'assetFormatValueEdited', value: 'a_specific_format_value_was_edited_on_an_asset' },
          madeBy(current),
        ),
      ],
    };
  });
  if (!result) throw notFound(`No format with id ${value.id}.`);
  publish(context, result.changes);
  const format = result.state.formats.find((f) => f.id === value.id)!;
  return reply(formatWire(format, result.state, withText));
}

/** Puts an asset on a tag or website (or takes it off): both must exist. */
async function associate(context: OperationContext, kind: 'tag' | 'website', add: boolean) {
  await associateAsset(context, assetId(context), kind, uuid(context.params[kind], `The ${kind} id`), add);
  return reply();
}

/** Puts asset `id` on the tag or website `otherId` (or takes it off), with the activity the user's change records. */
export async function associateAsset(context: OperationContext, id: string, kind: 'tag' | 'website', otherId: string, add: boolean) {
  const { storage } = context.service;
  const other = kind === 'tag' ? await storage.getTag(otherId) : await storage.getWebsite(otherId);
  if (!other) throw notFound(`No ${kind} with id ${otherId}.`);
  const time = clock(context);
  const result = await storage.editAsset({ asset: id }, (current): AssetEdit => {
    const on = current[kind === 'tag' ? 'tags' : 'websites'].some((item) => item.id === otherId);
    if (on === add) return { record: current.record };
    const pair =
      kind === 'tag'
        ? add
          ? ['assetTagAdded', 'a_tag_was_added_by_the_user']
          : ['assetTagDeleted', 'a_tag_was_deleted_by_the_user']
        : add
          ? ['assetLinkAdded', 'a_link_was_added_by_the_user']
          : ['assetLinkDeleted', 'a_link_was_deleted_by_the_user'];
    return {
      record: { ...current.record, updated: time.now().toISOString() },
      ...(kind === 'tag'
        ? add
          ? { addTags: [other as never] }
          : { removeTags: [otherId] }
        : add
          ? { addWebsites: [other as never] }
          : { removeWebsites: [otherId] }),
      activities: [activity(time, { asset: id, pair: pair[0]!, value: pair[1]! }, madeBy(current))],
    };
  });
  if (!result) throw notFound(`No asset with id ${id}.`);
  publish(context, result.changes);
}

export const assetAssociateTag = (context: OperationContext) => associate(context, 'tag', true);
export const assetDisassociateTag = (context: OperationContext) => associate(context, 'tag', false);
export const assetAssociateWebsite = (context: OperationContext) => associate(context, 'website', true);
export const assetDisassociateWebsite = (context: OperationContext) => associate(context, 'website', false);
