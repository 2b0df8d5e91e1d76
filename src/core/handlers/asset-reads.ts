/**
 * The reads of assets beyond the snapshots (AssetsApi, AssetApi): an asset read by a share's
 * accessor, the pseudo assets, the conversations that list an asset, an asset exported as
 * Markdown or HTML, and the assets recommended (by how they were used: their scores and
 * activities) and related (by the relevance index, to the asset used last).
 */
import type { OperationContext } from '../context.js';
import { badRequest, notFound, readJson, reply } from '../http.js';
import { assetWire } from '../models/asset.js';
import { assetMaterialOf } from '../models/asset-material.js';
import { conversationJson } from '../models/conversation.js';
import type { ActivityRecord, StoredAsset } from '../../storage/storage.js';
import { object, oneOf, optional, required, string, uuid } from '../validate.js';
import { transferables } from './common.js';

const assetId = (context: OperationContext) => uuid(context.params.asset, 'The asset id');

async function stored(context: OperationContext): Promise<StoredAsset> {
  const id = assetId(context);
  const asset = await context.service.storage.getAsset(id);
  if (!asset) throw notFound(`No asset with id ${id}.`);
  return asset;
}

/**
 * assetSnapshotPost: the asset as a share's accessor reads it (a SeededAccessor: the OS and the
 * share it reads through). Nothing is shared from here, so no access is counted: the asset is read.
 */
export async function assetSnapshotPost(context: OperationContext) {
  const withText = transferables(context.url);
  const body = await readJson(context.request, context.service.maxBodyBytes);
  const path = 'seededAccessor';
  if (body !== undefined) {
    const accessor = object(body, path);
    for (const key of Object.keys(accessor))
      if (!['schema', 'os', 'user', 'share'].includes(key))
        throw badRequest(`${path}.${key}: unknown key (SeededAccessor has schema, os, user, share).`);
    required(accessor, 'os', path, string);
    required(accessor, 'share', path, string);
    const user = optional(accessor, 'user', path, object);
    if (user) required(user, 'id', `${path}.user`, string);
  }
  return reply(assetWire(await stored(context), withText));
}

/** assetsPseudoSnapshot: the ids of the pseudo assets (those stored with `pseudo`: true), in the assets' order. */
export async function assetsPseudoSnapshot(context: OperationContext) {
  const assets = await context.service.storage.listAssets();
  return reply({ identifiers: { iterable: assets.filter((a) => a.record.pseudo).map(({ record }) => ({ id: record.id })) } });
}

/** assetSpecificAssetConversations: the conversations whose `assets` list the asset, in snapshot order. */
export async function assetSpecificAssetConversations(context: OperationContext) {
  const withReferences = transferables(context.url);
  const { record } = await stored(context);
  const list = await context.service.storage.listConversations({ messages: withReferences });
  const listing = list.conversations.filter((conversation) => {
    if (!conversation.json.includes(record.id)) return false;
    const assets = (JSON.parse(conversation.json) as { assets?: { iterable?: Array<{ id?: unknown }> } }).assets?.iterable ?? [];
    return assets.some((item) => item.id === record.id);
  });
  return reply(`{"iterable":[${listing.map((conversation) => conversationJson(conversation, list.messages)).join(',')}]}`);
}

const EXPORT_TYPES = ['UNKNOWN', 'HTML', 'MD'] as const;

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * assetSpecificAssetExport: the asset as a document of `export_type` (MD or HTML): its name as
 * the title, its description, and its text in a code block of its language. An asset with no
 * text (an image) is exported with its title and description only.
 */
export async function assetSpecificAssetExport(context: OperationContext) {
  const type = oneOf(context.url.searchParams.get('export_type') ?? undefined, EXPORT_TYPES, 'export_type');
  if (type === 'UNKNOWN') throw badRequest('export_type must be MD or HTML.');
  const asset = await stored(context);
  const { name, language, text, description = '' } = assetMaterialOf(asset);
  const title = name || 'Untitled';
  const document =
    type === 'MD'
      ? `${[`# ${title}`, description, text ? `\`\`\`${language}\n${text}\n\`\`\`` : ''].filter(Boolean).join('\n\n')}\n`
      : [
          '<!doctype html>',
          `<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>`,
          `<h1>${escapeHtml(title)}</h1>`,
          ...(description ? [`<p>${escapeHtml(description)}</p>`] : []),
          ...(text ? [`<pre><code class="language-${escapeHtml(language)}">${escapeHtml(text)}</code></pre>`] : []),
          '</body></html>',
          '',
        ].join('\n');
  return reply({ name: title, description, created: { value: asset.record.created }, raw: { string: { raw: document } } });
}

/** The sum of an asset's Score counts (0 with none). */
const used = (asset: StoredAsset) => Object.values(asset.record.score ?? {}).reduce((sum, n) => sum + (typeof n === 'number' ? n : 0), 0);

/** The latest activity per asset (ISO order key), and how many each has. */
function activityOf(activities: readonly ActivityRecord[]) {
  const latest = new Map<string, string>();
  const count = new Map<string, number>();
  for (const activity of activities) {
    if (!activity.asset) continue;
    count.set(activity.asset, (count.get(activity.asset) ?? 0) + 1);
    if ((latest.get(activity.asset) ?? '') < activity.order) latest.set(activity.asset, activity.order);
  }
  return { latest, count };
}

/** How many assets a recommendation or a relation answers at most. */
const RECOMMENDED = 10;

/**
 * assetsGetRecommendedAssets: the assets used most, from what this store knows of their use:
 * their Score counts (the clients' score increments), then how many activities they have, then the
 * latest of those; at most 10, whole. (The SDK's SeededAssetsRecommendation rides on a GET, which
 * the Fetch API sends without a body: the recommendation is made from the store.)
 */
export async function assetsGetRecommendedAssets(context: OperationContext) {
  const { storage } = context.service;
  const [assets, activities] = await Promise.all([storage.listAssets(), storage.listActivities()]);
  const { latest, count } = activityOf(activities);
  const ranked = [...assets].sort(
    (a, b) =>
      used(b) - used(a) ||
      (count.get(b.record.id) ?? 0) - (count.get(a.record.id) ?? 0) ||
      (latest.get(b.record.id) ?? b.record.updated).localeCompare(latest.get(a.record.id) ?? a.record.updated),
  );
  return reply({ iterable: ranked.slice(0, RECOMMENDED).map((asset) => assetWire(asset, true)) });
}

/**
 * assetsGetRelatedAssets: the assets related to the asset used last (the asset of the latest
 * activity, else the one updated last), ranked by the relevance index against its name,
 * description and text; at most 10, not that asset itself. None when there is no asset to relate
 * to. (The SDK's Assets body rides on a GET, which the Fetch API sends without one.)
 */
export async function assetsGetRelatedAssets(context: OperationContext) {
  const { storage, copilot } = context.service;
  const [assets, activities] = await Promise.all([storage.listAssets(), storage.listActivities()]);
  const { latest } = activityOf(activities);
  const byId = new Map(assets.map((asset) => [asset.record.id, asset]));
  const last = [...assets].sort((a, b) =>
    (latest.get(b.record.id) ?? b.record.updated).localeCompare(latest.get(a.record.id) ?? a.record.updated),
  )[0];
  if (!last) return reply({ iterable: [] });
  const { name, description = '', text } = assetMaterialOf(last);
  const ranked = await copilot.corpus.search(`${name}\n${description}\n${text}`, { assets: true, limit: RECOMMENDED + 1 });
  const related = ranked.filter((hit) => hit.id !== last.record.id && byId.has(hit.id)).slice(0, RECOMMENDED);
  return reply({ iterable: related.map((hit) => assetWire(byId.get(hit.id)!, true)) });
}
