/**
 * Shares, their links and distributions (SharesApi, ShareApi, LinkifyApi, DistributionsApi,
 * DistributionApi, PieceApi's htmlShare): local records of the generic path's `share` and
 * `distribution` kinds (their snapshots, items and score increments are its), made here.
 *
 * - A share's link is a URL under the origin and base this service was asked on,
 *   `<base>/?p=<short>`, which `GET /` (htmlShare) renders as a page of the shared assets; `short`
 *   is made from the share's id, so the link stays what it was (kept in the record) across restarts.
 * - A revoke deletes the share (its link answers 404 from then on), with its distributions.
 * - A distribution belongs to a share (Distribution.share): it is made with it by linkify
 *   (`Linkify.distributions`); a SeededDistribution names no share, so a create of one alone is a
 *   400. Its record is also listed whole in its share (Share.distributions): an update or a delete
 *   writes both in one transaction. A mailgun distribution is kept, not mailed; a GitHub gist
 *   cannot be made here (501).
 */
import type { GenericKind } from '../../shared/graph.js';
import { checkShape } from '../../shared/shapes.js';
import { materialKey, type MaterialRecord } from '../../storage/storage.js';
import type { OperationContext } from '../context.js';
import { findRoute } from '../routes.js';
import { badRequest, clip, HttpError, notFound, readJson, reply } from '../http.js';
import { flattenedAsset } from '../models/asset-wire.js';
import { isObject, uuid, type JsonObject } from '../validate.js';
import { clock, publish, transferables } from './common.js';
import { MATERIAL_OPERATIONS } from './materials.js';

type Value = JsonObject & { id: string };

const noSuch = (kind: string, id: string) => notFound(`No ${kind} with id ${id}.`);

/** A body checked strictly as `model` (or, with `path`, a part of one), or a 400 naming the field. */
function checked(value: unknown, model: string, path: string): JsonObject {
  const problem = checkShape(model, value, path);
  if (problem) throw badRequest(`${problem}.`.replace(/\.\.$/, '.'));
  return value as JsonObject;
}

async function body(context: OperationContext, what: string): Promise<JsonObject> {
  const value = await readJson(context.request, context.service.maxBodyBytes);
  if (!isObject(value)) throw badRequest(`The request body must be a ${what} (a JSON object).`);
  return value;
}

/** The base this request was made under (`http://localhost:1000`), from its URL less the operation's path. */
function baseOf(context: OperationContext, operationPath: string): string {
  const { pathname, origin } = context.url;
  const at = pathname.endsWith(operationPath) ? pathname.length - operationPath.length : 0;
  return origin + pathname.slice(0, at);
}

/** The share's short code: the first 12 hex digits of its id. */
const shortOf = (id: string) => id.replace(/-/g, '').slice(0, 12);

/** A share's record as Pieces OS flattens it in its distributions. */
function flattenedShare(share: Value): JsonObject {
  const { asset, distributions, ...rest } = share;
  const listed = isObject(distributions) && Array.isArray(distributions.iterable) ? distributions.iterable : [];
  return {
    ...rest,
    ...(isObject(asset) ? { asset: asset.id } : {}),
    ...(listed.length ? { distributions: { iterable: listed.map((d) => ({ id: (d as Value).id })) } } : {}),
  };
}

interface ShareInput {
  asset?: string;
  assets?: string[];
  access: string;
  name?: string;
  distributions?: JsonObject[];
}

/**
 * Makes a share (and its distributions) of the assets named, in one transaction: 404 for an
 * asset that does not exist. Answers Shares, as the SDK's create and linkify do.
 */
async function makeShare(context: OperationContext, input: ShareInput, operationPath: string) {
  transferables(context.url);
  const { storage } = context.service;
  const ids = [...(input.asset ? [input.asset] : []), ...(input.assets ?? [])];
  if (!ids.length) throw badRequest('A share needs an asset to share: send an asset (or assets).');
  const assets = new Map<string, JsonObject>();
  for (const id of ids) {
    const whole = await storage.getAsset(id);
    if (!whole) throw noSuch('asset', id);
    assets.set(id, flattenedAsset(whole));
  }
  const time = clock(context);
  const id = time.newId();
  const created = { value: time.now().toISOString() };
  const short = shortOf(id);
  const share: Value = {
    id,
    ...(input.asset ? { asset: assets.get(input.asset)! } : {}),
    ...(input.assets?.length ? { assets: { iterable: input.assets.map((asset) => ({ id: asset })) } } : {}),
    link: `${baseOf(context, operationPath)}/?p=${short}`,
    access: input.access,
    accessors: { iterable: [] },
    created,
    short,
    ...(input.name !== undefined ? { name: input.name } : {}),
    score: { manual: 0, automatic: 0 },
  };
  const distributions: Value[] = (input.distributions ?? []).map((seed) => ({
    id: time.newId(),
    share: {},
    created,
    updated: created,
    ...(seed.mailgun ? { mailgun: seed.mailgun } : {}),
  }));
  if (distributions.length) {
    share.distributions = { iterable: distributions };
    const flat = flattenedShare(share);
    for (const d of distributions) d.share = flat;
  }
  const { changes } = await storage.editMaterials([], () => ({
    put: [{ kind: 'share', id, value: share }, ...distributions.map((d) => ({ kind: 'distribution' as const, id: d.id, value: d }))],
  }));
  publish(context, changes);
  return reply({ iterable: [share] });
}

/** A list of SeededDistribution, each checked; a GitHub gist cannot be made here. */
function seededDistributions(value: unknown, path: string): JsonObject[] {
  if (value === undefined) return [];
  if (!isObject(value) || !Array.isArray(value.iterable)) throw badRequest(`${path} must be SeededDistributions ({ iterable: [...] }).`);
  return value.iterable.map((item, i) => {
    const seed = checked(item, 'SeededDistribution', `${path}.iterable[${i}]`);
    if (seed.github !== undefined) throw githubCannot();
    return seed;
  });
}

const githubCannot = () =>
  new HttpError(
    501,
    "A GitHub distribution (a gist) is made on GitHub by Pieces' cloud, which no host of this service reaches: send a mailgun distribution, or none.",
  );

function access(value: unknown, path: string): string {
  checked(value, 'AccessEnum', path);
  return value as string;
}

function users(value: unknown, path: string): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) throw badRequest(`${path} must be a list of SeededUser.`);
  for (const [i, user] of value.entries()) checked(user, 'SeededUser', `${path}[${i}]`);
}

// ---- SharesApi ----

export async function sharesCreateNewShare(context: OperationContext) {
  const seed = checked(await body(context, 'SeededShare'), 'SeededShare', 'seededShare');
  const assets =
    isObject(seed.assets) && Array.isArray(seed.assets.iterable) ? seed.assets.iterable.map((a) => (a as Value).id) : undefined;
  return makeShare(
    context,
    {
      ...(isObject(seed.asset) ? { asset: uuid(seed.asset.id, 'seededShare.asset.id') } : {}),
      ...(assets ? { assets } : {}),
      access: seed.access as string,
      ...(typeof seed.name === 'string' ? { name: seed.name } : {}),
    },
    '/shares/create',
  );
}

/** Deletes a share and its distributions in one transaction; answers its id. */
async function removeShare(context: OperationContext) {
  const id = uuid(context.params.share, 'The share id');
  const { storage } = context.service;
  const { changes } = await storage.editMaterials(
    [{ kind: 'share', id }],
    (found) => {
      if (!found.has(materialKey({ kind: 'share', id }))) throw noSuch('share', id);
      return { delete: [...found.values()].map(({ kind, id }) => ({ kind, id })) };
    },
    (found) => distributionsOf(found.get(materialKey({ kind: 'share', id }))),
  );
  publish(context, changes);
  return reply(id, { type: 'text' });
}

const distributionsOf = (share: MaterialRecord | undefined) => {
  const listed = share && isObject(share.value.distributions) ? share.value.distributions.iterable : undefined;
  return Array.isArray(listed) ? listed.map((d) => ({ kind: 'distribution' as const, id: (d as Value).id })) : [];
};

export const sharesDeleteShare = removeShare;

/** `GET /shares/{share}`: the share, as `GET /share/{share}` answers it. */
export const sharesSpecificShareSnapshot = MATERIAL_OPERATIONS.find((o) => o.name === 'shareSnapshot')!.handler;

// ---- LinkifyApi ----

export async function linkify(context: OperationContext) {
  const sent = await body(context, 'Linkify');
  for (const key of Object.keys(sent))
    if (!['schema', 'seed', 'asset', 'users', 'access', 'distributions'].includes(key))
      throw badRequest(`linkify.${clip(key, 60)} is not a field of Linkify.`);
  const level = access(sent.access, 'linkify.access');
  users(sent.users, 'linkify.users');
  const distributions = seededDistributions(sent.distributions, 'linkify.distributions');
  let asset: string;
  if (sent.asset !== undefined) asset = uuid(checked(sent.asset, 'Asset', 'linkify.asset').id, 'linkify.asset.id');
  else if (isObject(sent.seed)) asset = await createAsset(context, sent.seed);
  else throw badRequest('linkify needs an asset to share: send linkify.asset (an Asset) or linkify.seed (a Seed of a new one).');
  return makeShare(context, { asset, access: level, distributions }, '/linkify');
}

/** Creates the asset a Seed describes, as `POST /assets/create` does (its 4xx as it answers them); its id. */
async function createAsset(context: OperationContext, seed: JsonObject): Promise<string> {
  const route = findRoute('POST', '/assets/create')!;
  const request = new Request(new URL('/assets/create', context.url), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(seed),
  });
  const response = await route.operation.handler({ ...context, request, url: new URL(request.url), params: {} });
  if (!response.ok) throw new HttpError(response.status, `linkify.seed: ${await response.text()}`);
  return ((await response.json()) as Value).id;
}

export async function linkifyMultiple(context: OperationContext) {
  const sent = await body(context, 'LinkifyMultiple');
  for (const key of Object.keys(sent))
    if (!['schema', 'assets', 'users', 'access', 'name'].includes(key))
      throw badRequest(`linkifyMultiple.${clip(key, 60)} is not a field of LinkifyMultiple.`);
  const level = access(sent.access, 'linkifyMultiple.access');
  users(sent.users, 'linkifyMultiple.users');
  if (!Array.isArray(sent.assets) || !sent.assets.length)
    throw badRequest('linkifyMultiple.assets must list the ids of the assets to share.');
  const assets = sent.assets.map((id, i) => uuid(id, `linkifyMultiple.assets[${i}]`));
  if (sent.name !== undefined && typeof sent.name !== 'string') throw badRequest('linkifyMultiple.name must be a string.');
  return makeShare(context, { assets, access: level, ...(typeof sent.name === 'string' ? { name: sent.name } : {}) }, '/linkify/multiple');
}

/** Revokes a share: it is deleted (its link answers 404 from then on), with its distributions; answers its id. */
export const linkifyShareRevoke = removeShare;

// ---- DistributionsApi, DistributionApi ----

export async function distributionsCreateNewDistribution(context: OperationContext): Promise<Response> {
  const seed = checked(await body(context, 'SeededDistribution'), 'SeededDistribution', 'seededDistribution');
  if (seed.github !== undefined) throw githubCannot();
  throw badRequest(
    'A Distribution belongs to a share (Distribution.share) and a SeededDistribution names none: make it with its share, in linkify.distributions.',
  );
}

/** Writes a distribution (or deletes it) and its copy in its share's list, in one transaction. */
async function editDistribution(context: OperationContext, id: string, next: (stored: Value) => Value | undefined) {
  const { storage } = context.service;
  let answer: Value | undefined;
  const { changes } = await storage.editMaterials(
    [{ kind: 'distribution', id }],
    (found) => {
      const stored = found.get(materialKey({ kind: 'distribution', id }));
      if (!stored) throw noSuch('distribution', id);
      answer = next(stored.value);
      const shareId = (stored.value.share as Value | undefined)?.id;
      const share = shareId ? found.get(materialKey({ kind: 'share', id: shareId })) : undefined;
      const put: Array<{ kind: GenericKind; id: string; value: Value }> = answer ? [{ kind: 'distribution', id, value: answer }] : [];
      if (share) {
        const listed =
          isObject(share.value.distributions) && Array.isArray(share.value.distributions.iterable)
            ? share.value.distributions.iterable
            : [];
        const others = listed.filter((d) => (d as Value).id !== id);
        const iterable = answer ? listed.map((d) => ((d as Value).id === id ? answer! : d)) : others;
        const { distributions: _gone, ...rest } = share.value;
        put.push({
          kind: 'share',
          id: share.id,
          value: (iterable.length ? { ...rest, distributions: { iterable } } : rest) as Value,
        });
      }
      return { put, ...(answer ? {} : { delete: [{ kind: 'distribution' as const, id }] }) };
    },
    (found) => {
      const shareId = (found.get(materialKey({ kind: 'distribution', id }))?.value.share as Value | undefined)?.id;
      return shareId ? [{ kind: 'share' as const, id: shareId }] : [];
    },
  );
  publish(context, changes);
  return answer;
}

export async function distributionsDeleteSpecificDistribution(context: OperationContext) {
  await editDistribution(context, uuid(context.params.distribution, 'The distribution id'), () => undefined);
  return reply();
}

/** The whole Distribution as sent, its id, share and `created` kept, `updated` now. */
export async function distributionUpdate(context: OperationContext) {
  const sent = checked(await body(context, 'Distribution'), 'Distribution', 'distribution');
  if (isObject(sent.github)) throw githubCannot();
  const now = { value: clock(context).now().toISOString() };
  const id = uuid(sent.id, 'distribution.id');
  return reply(
    await editDistribution(context, id, (stored) => ({ ...sent, id, share: stored.share, created: stored.created, updated: now }) as Value),
  );
}

// ---- PieceApi ----

const escaped = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** `GET /?p=<short>`: the page a share's link opens, the shared assets with their text; 404 for a share revoked or unknown. */
export async function htmlShare(context: OperationContext) {
  const { storage } = context.service;
  const p = context.url.searchParams.get('p');
  if (!p) throw badRequest('The p query parameter is required: the short code of a share (its link ends with ?p=<short>).');
  const share = (await storage.listMaterials('share')).find((s) => s.value.short === p || s.id === p);
  if (!share) throw notFound(`No share with the short code ${clip(p, 60)}.`);
  const value = share.value as Value;
  const ids = [
    ...(isObject(value.asset) ? [value.asset.id as string] : []),
    ...(isObject(value.assets) && Array.isArray(value.assets.iterable) ? value.assets.iterable.map((a) => (a as Value).id) : []),
  ];
  const parts: string[] = [];
  for (const id of ids) {
    const whole = await storage.getAsset(id);
    if (!whole) continue;
    const text = whole.formats.find((f) => f.text !== undefined)?.text ?? '';
    parts.push(`<section><h2>${escaped(whole.record.name ?? '')}</h2><pre><code>${escaped(text)}</code></pre></section>`);
  }
  const title = escaped(typeof value.name === 'string' ? value.name : 'Shared from Pieces');
  const page = `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1>${parts.join('')}</body></html>`;
  return reply(page, { type: 'text', headers: { 'Content-Type': 'text/html; charset=utf-8' } });
}
