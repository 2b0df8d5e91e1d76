/**
 * Handlers of ConnectorApi: connect; an application's intentions, onboarding, suggestions for a
 * copied snippet and its reactions to them, and its tracking.
 */
import type { OperationContext } from '../context.js';
import { badRequest, notFound, readJson, reply } from '../http.js';
import { applicationWire } from '../models/application.js';
import { activity } from '../models/activity.js';
import { seededValue } from '../models/asset-seed.js';
import { assetWire } from '../models/asset.js';
import { detectSpecific, genericOf, specificOf } from '../models/classify.js';
import { tokenize } from '../relevance.js';
import type { ApplicationRecord } from '../../storage/schema.js';
import { CapabilitiesEnum, PlatformEnum, PrivacyEnum, ApplicationNameEnum } from '../enums.js';
import { boolean, embeddedSchema, knownKeys, object, oneOf, optional, required, string, type JsonObject } from '../validate.js';
import { PIECES_OS_VERSION } from '../../shared/version.js';
import { localUser } from './user.js';
import { createAssetFromSeed } from './assets.js';
import { clock, publish, recordActivity } from './common.js';
import { osId } from './os.js';

/**
 * Upserts the application a SeededConnectorConnection describes (the same
 * name, platform and version always get the same id) and answers the Context.
 */
export async function connect(context: OperationContext) {
  const { service } = context;
  const path = 'seededConnectorConnection';
  const body = object(await readJson(context.request, service.maxBodyBytes), path);
  const seeded = required(body, 'application', path, object);
  const at = `${path}.application`;
  const name = required(seeded, 'name', at, (v, p) => oneOf(v, ApplicationNameEnum, p));
  const version = required(seeded, 'version', at, string);
  const platform = required(seeded, 'platform', at, (v, p) => oneOf(v, PlatformEnum, p));
  const capabilities = optional(seeded, 'capabilities', at, (v, p) => oneOf(v, CapabilitiesEnum, p));
  const privacy = optional(seeded, 'privacy', at, (v, p) => oneOf(v, PrivacyEnum, p)) ?? 'OPEN';
  const automaticUnload = optional(seeded, 'automaticUnload', at, boolean);
  const id = await service.storage.ensureMeta(`application:${name}|${platform}|${version}`, service.clock.newId);
  const application = {
    id,
    name,
    version,
    platform,
    onboarded: true,
    privacy,
    ...(capabilities ? { capabilities } : {}),
    ...(automaticUnload === undefined ? {} : { automaticUnload }),
  };
  publish(context, await service.storage.putApplication(application));
  const [stored, os, user] = await Promise.all([service.storage.getApplication(id), osId(service), localUser(context)]);
  return reply({
    os,
    application: applicationWire(stored!.application, stored!.engagement),
    health: { os: { id: os, version: PIECES_OS_VERSION } },
    ...(user ? { user } : {}),
  });
}

/**
 * The application a connector operation's path names (`/{application}/track`): it must be
 * registered (connect, or applicationsRegister), else 404.
 */
async function connected(context: OperationContext): Promise<ApplicationRecord> {
  const id = context.params.application!;
  const found = await context.service.storage.getApplication(id);
  if (!found) throw notFound(`No application with id ${id}: connect it first (POST /connect).`);
  return found.application;
}

/** The meta key of the intentions an application declared (the seeds it sent to intention, newest last). */
const intentionsKey = (application: string) => `connectorIntentions:${application}`;
/** Intentions kept per application: the newest. */
const INTENTIONS_KEPT = 100;

/** A SeededConnectorCreation's text (its asset's format, fragment or file, as text), validated. */
function creationText(value: unknown, path: string): { text: string; seed: JsonObject; hints: Array<string | undefined> } {
  const seed = object(value, path);
  knownKeys(seed, ['schema', 'asset'], path, 'SeededConnectorCreation');
  optional(seed, 'schema', path, embeddedSchema);
  return { ...required(seed, 'asset', path, assetText), seed };
}

/** A SeededConnectorAsset's text (its format's fragment or file, as text), validated. */
function assetText(value: unknown, at: string): { text: string; hints: Array<string | undefined> } {
  const asset = object(value, at);
  knownKeys(asset, ['schema', 'metadata', 'format'], at, 'SeededConnectorAsset');
  optional(asset, 'schema', at, embeddedSchema);
  const metadata = optional(asset, 'metadata', at, object);
  const format = required(asset, 'format', at, object);
  const fp = `${at}.format`;
  knownKeys(format, ['schema', 'file', 'fragment', 'classification'], fp, 'SeededFormat');
  optional(format, 'classification', fp, object);
  const content = [
    optional(format, 'fragment', fp, (v, p) => seededValue(v, p, 'fragment')),
    optional(format, 'file', fp, (v, p) => seededValue(v, p, 'file')),
  ].find((c) => c?.text !== undefined);
  if (!content) throw badRequest(`${fp} holds no text: send it as ${fp}.fragment.string.raw.`);
  const name = metadata && typeof metadata.name === 'string' ? metadata.name : undefined;
  return { text: content.text!, hints: [...content.hints, name] };
}

/**
 * intention: the application sends a snippet (a SeededConnectorAsset) for later comparison:
 * kept (the application's newest hundred), and a later suggestion of the same text suggests
 * saving it.
 */
export async function intention(context: OperationContext) {
  const application = await connected(context);
  const body = await readJson(context.request, context.service.maxBodyBytes);
  if (body === undefined) throw badRequest('The request body is required: send a SeededConnectorAsset ({"format":{"fragment":{…}}}).');
  const { text } = assetText(body, 'seededConnectorAsset');
  const at = context.service.clock.now().toISOString();
  const kept = await context.service.storage.updateMeta<Array<{ text: string; at: string }>>(intentionsKey(application.id), (current) =>
    [...(current ?? []).filter((item) => item.text !== text), { text, at }].slice(-INTENTIONS_KEPT),
  );
  return reply(`Intention recorded for application ${application.id} (${kept.length} kept).`, { type: 'text' });
}

/**
 * onboarded: whether the application has finished its onboarding (a JSON boolean): kept on the
 * application, whose `onboarded` every read of it gives.
 */
export async function onboarded(context: OperationContext) {
  const application = await connected(context);
  const body = await readJson(context.request, context.service.maxBodyBytes);
  if (typeof body !== 'boolean')
    throw badRequest('The request body must be a JSON boolean: whether the application is onboarded (true or false).');
  publish(context, await context.service.storage.putApplication({ ...application, onboarded: body }));
  return reply(`Application ${application.id} is ${body ? '' : 'not '}onboarded.`, { type: 'text' });
}

/** How alike two texts are: the share of their distinct terms they have in common (0 to 1). */
function likeness(a: string, b: string): number {
  const left = new Set(tokenize(a));
  const right = new Set(tokenize(b));
  if (left.size === 0 && right.size === 0) return a.trim() === b.trim() ? 1 : 0;
  const shared = [...left].filter((term) => right.has(term)).length;
  return shared / (left.size + right.size - shared);
}

/** Most stored assets a suggestion offers for reuse. */
const REUSE_LIMIT = 5;

/**
 * suggest: what to do with a snippet the user copied in the application. Reuse is suggested
 * when stored assets match it (the relevance index's best, each whole, at most five); saving
 * when no stored asset holds this text already and it is code, or the application declared
 * the intention to keep it (intention). `target.vector` is how alike the snippet and the best
 * match are (their shared terms, 0 to 1).
 */
export async function suggest(context: OperationContext) {
  const application = await connected(context);
  const body = await readJson(context.request, context.service.maxBodyBytes);
  if (body === undefined) throw badRequest('The request body is required: send a SeededConnectorCreation ({"asset":{"format":{…}}}).');
  const { text, seed, hints } = creationText(body, 'seededConnectorCreation');
  const { storage, copilot } = context.service;
  const hits = await copilot.corpus.search(text, { assets: true, limit: REUSE_LIMIT });
  const found = (await Promise.all(hits.map((hit) => storage.getAsset(hit.id)))).filter((asset) => asset !== undefined);
  const stored = found.some((asset) => asset.formats.some((format) => format.text?.trim() === text.trim()));
  const intended = ((await storage.getMeta<Array<{ text: string }>>(intentionsKey(application.id))) ?? []).some(
    (item) => item.text === text,
  );
  const specific = hints.map(specificOf).find((s) => s !== undefined) ?? detectSpecific(text);
  const best = found[0]?.formats[0]?.text;
  return reply({
    reuse: { suggested: found.length > 0, assets: { iterable: found.map((asset) => assetWire(asset, true)) } },
    save: { suggested: !stored && (intended || genericOf(specific) === 'CODE') },
    target: { seed, vector: best === undefined ? 0 : Math.round(likeness(text, best) * 1000) / 1000 },
    assets: { iterable: found.map((asset) => assetWire(asset, true)) },
  });
}

/**
 * react: the user's answer to a suggestion (a Reaction). `save`: the snippet is saved as an
 * asset of the application (answered with its id); `reuse`: the suggested asset the user took
 * is recorded as referenced (an activity of the asset). Answers what it did.
 */
export async function react(context: OperationContext) {
  const application = await connected(context);
  const path = 'reaction';
  const body = object(await readJson(context.request, context.service.maxBodyBytes), path);
  knownKeys(body, ['schema', 'save', 'reuse', 'seed'], path, 'Reaction');
  optional(body, 'schema', path, embeddedSchema);
  const save = required(body, 'save', path, boolean);
  const reuse = optional(body, 'reuse', path, (v, p) => {
    const item = object(v, p);
    knownKeys(item, ['schema', 'asset'], p, 'ReuseReaction');
    return required(item, 'asset', p, string);
  });
  const { seed } = creationText(
    required(body, 'seed', path, (v) => v),
    `${path}.seed`,
  );
  if (reuse !== undefined && !(await context.service.storage.getAsset(reuse)))
    throw notFound(`No asset with id ${reuse} (${path}.reuse.asset).`);
  const done: string[] = [];
  if (save) {
    const asset = seed.asset as JsonObject;
    const metadata = (asset.metadata as JsonObject | undefined) ?? {};
    const created = await createAssetFromSeed(context, {
      type: 'SEEDED_ASSET',
      asset: { application, format: asset.format, metadata: { mechanism: 'RECOMMENDED', ...metadata } },
    });
    done.push(`saved as asset ${created.record.id}`);
  }
  if (reuse !== undefined) {
    const time = clock(context);
    await recordActivity(
      context,
      activity(
        time,
        { asset: reuse, pair: 'suggestedAssetReferenced', value: 'a_suggested_asset_was_referenced_by_the_user' },
        application,
      ),
    );
    done.push(`asset ${reuse} recorded as reused`);
  }
  return reply(done.length ? `Reaction recorded: ${done.join('; ')}.` : 'Reaction recorded: nothing saved or reused.', { type: 'text' });
}

/** The parts of a SeededConnectorTracking, as its model names them. */
export const TRACKED = [
  'format',
  'asset',
  'interaction',
  'keyboard',
  'session',
  'assets',
  'ml',
  'adoption',
  'conversation',
  'conversation_message',
  'workstream_summary',
];

/**
 * track: what the application reports of its use (a SeededConnectorTracking). An interaction or
 * a keyboard event is recorded as the usage engagement operations record theirs (counted in
 * the application's engagement); an asset event as an activity of that asset (which must
 * exist), read back from the activities. The other parts are checked to be objects and not
 * kept (the answer says which).
 */
export async function track(context: OperationContext) {
  const application = await connected(context);
  const path = 'seededConnectorTracking';
  const body = object(await readJson(context.request, context.service.maxBodyBytes), path);
  knownKeys(body, ['schema', ...TRACKED], path, 'SeededConnectorTracking');
  optional(body, 'schema', path, embeddedSchema);
  for (const key of TRACKED) optional(body, key, path, object);
  const interaction = body.interaction as JsonObject | undefined;
  if (interaction) required(interaction, 'description', `${path}.interaction`, string);
  const keyboard = body.keyboard as JsonObject | undefined;
  if (keyboard) required(keyboard, 'description', `${path}.keyboard`, string);
  const asset = body.asset as JsonObject | undefined;
  let assetEvent: { id: string; pair: string; value: string } | undefined;
  if (asset) {
    const at = `${path}.asset`;
    const id = required(required(asset, 'asset', at, object), 'id', `${at}.asset`, string);
    const pairs = Object.entries(required(asset, 'identifier_description_pair', at, object)).filter(([key]) => key !== 'schema');
    if (pairs.length !== 1 || typeof pairs[0]![1] !== 'string')
      throw badRequest(`${at}.identifier_description_pair must name one event ({"asset_viewed":"an_asset_was_viewed"}).`);
    if (!(await context.service.storage.getAsset(id))) throw notFound(`No asset with id ${id} (${at}.asset.id).`);
    assetEvent = { id, pair: pairs[0]![0], value: pairs[0]![1] as string };
  }
  const { service } = context;
  const kept: string[] = [];
  for (const [kind, event] of [
    ['interaction', interaction],
    ['keyboard', keyboard],
  ] as const) {
    if (!event) continue;
    publish(
      context,
      await service.storage.recordEvent({
        id: service.clock.newId(),
        kind,
        at: service.clock.now().toISOString(),
        payload: event,
        application: application.id,
      }),
    );
    kept.push(kind);
  }
  if (assetEvent) {
    await recordActivity(
      context,
      activity(clock(context), { asset: assetEvent.id, pair: assetEvent.pair, value: assetEvent.value }, application),
    );
    kept.push('asset');
  }
  const ignored = TRACKED.filter((key) => body[key] !== undefined && !kept.includes(key));
  return reply(
    `Tracked for application ${application.id}: ${kept.length ? kept.join(', ') : 'nothing kept'}${ignored.length ? `; not kept here: ${ignored.join(', ')}` : ''}.`,
    { type: 'text' },
  );
}
