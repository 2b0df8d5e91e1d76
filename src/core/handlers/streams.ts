/**
 * The socket paths: a plain GET is 426; the shim's handshake and `?after=N` catch-up are answered
 * from the change log, in the wire shapes of stream-wire.ts.
 */
import type { OperationContext } from '../context.js';
import { badRequest, clip, HttpError, reply } from '../http.js';
import type { Collection } from '../../storage/storage.js';
import { identifiersFrame, STREAM_HEADER, type CatchUp, type Handshake } from '../stream-wire.js';
import { assetWire } from '../models/asset.js';
import { localUser } from './user.js';
import { clock } from './common.js';
import { osId, osSettings } from './os.js';
import { currentVisionStatus } from '../models/pattern-engine.js';
import { OSAppletEnum } from '../enums.js';
import { oneOf } from '../validate.js';
import { VERSION } from '../../shared/version.js';
import { latestSuggestions } from './qgpt-extras.js';

function handshake({ request, url }: OperationContext) {
  if (request.headers.get(STREAM_HEADER) !== 'handshake') {
    const path = clip(url.pathname);
    throw new HttpError(426, `${path} is a WebSocket: connect with new WebSocket("ws://${url.host}${path}").`, {
      Upgrade: 'websocket',
    });
  }
}

/** A catch-up's `after` (the last change the socket delivered), or null for its handshake. */
function afterOf(url: URL): number | null {
  const after = url.searchParams.get('after');
  if (after !== null && !/^\d+$/.test(after))
    throw badRequest(`after must be a change sequence number, not ${clip(JSON.stringify(after))}.`);
  return after === null ? null : Number(after);
}

/**
 * An identifier stream: first message every id of the collection, then one message per change.
 * `ids`: the collection's ids when they are not (all) stored records, from the stored ones.
 */
export const identifierStream =
  (collection: Collection, ids?: (stored: string[], context: OperationContext) => string[] | Promise<string[]>) =>
  async (context: OperationContext) => {
    handshake(context);
    const { service, url } = context;
    const after = afterOf(url);
    // The identity is read before the data: if the database is replaced in between, the socket keeps
    // the older identity, and its next check (which gets the new one) makes it start afresh.
    const database = await service.storage.identity();
    if (after !== null) return reply({ ...(await service.storage.changesSince(after, collection)), database } satisfies CatchUp);
    const listed = await service.storage.listIds(collection);
    return reply({
      seq: listed.seq,
      database,
      message: identifiersFrame(collection, ids ? await ids(listed.ids, context) : listed.ids),
    } satisfies Handshake);
  };

export const conversationsStreamIdentifiers = identifierStream('conversation');
export const conversationMessagesStreamIdentifiers = identifierStream('conversationMessage');
export const assetsStreamIdentifiers = identifierStream('asset');
/** The applications stream lists the OS's own entry first, as the applications snapshot does. */
export const applicationsStreamIdentifiers = identifierStream('application', async (stored, { service }) => {
  const os = await osId(service);
  return [os, ...stored.filter((id) => id !== os)];
});
export const anchorsStreamIdentifiers = identifierStream('anchor');
export const activitiesStreamIdentifiers = identifierStream('activity');
export const annotationsStreamIdentifiers = identifierStream('annotation');
/** Every change of a format (its value, classification, its asset's create or delete) is logged as a `format` change. */
export const formatsStreamIdentifiers = identifierStream('format');

/**
 * A stream of whole assets (Assets frames): first every asset, then each asset a change touched as it
 * is now, a deleted one as the client last had it with `deleted` stamped (the socket keeps what it
 * sent: stream-wire.ts wholeAssetFrames). `withValues`: formats carry their values (transferables).
 */
const wholeAssets = (withValues: boolean) => async (context: OperationContext) => {
  handshake(context);
  const { service, url } = context;
  const after = afterOf(url);
  const database = await service.storage.identity();
  if (after !== null) {
    const caught = await service.storage.changesSince(after, 'asset');
    const found = await Promise.all([...new Set(caught.changes.map((c) => c.id))].map((id) => service.storage.getAsset(id)));
    const records = Object.fromEntries(found.flatMap((asset) => (asset ? [[asset.record.id, assetWire(asset, withValues)]] : [])));
    return reply({ ...caught, database, records, at: clock(context).now().toISOString() } satisfies CatchUp);
  }
  // The sequence first, then the assets: a change committed in between is in both, never in neither.
  const { seq } = await service.storage.listIds('asset');
  const assets = await service.storage.listAssets();
  return reply({ seq, database, message: { iterable: assets.map((asset) => assetWire(asset, withValues)) } } satisfies Handshake);
};

/** streamAssets (`/assets/stream`): whole assets, their formats without values. */
export const streamAssets = wholeAssets(false);
/** getAssetsStreamTransferables (`/assets/stream/transferables`): whole assets, their formats with values. */
export const getAssetsStreamTransferables = wholeAssets(true);

/** getWellKnownStreamHealth: `ok:<os id>` on open, then periodically while the service answers. */
export async function getWellKnownStreamHealth(context: OperationContext) {
  handshake(context);
  return reply({ seq: 0, message: `ok:${await osId(context.service)}` } satisfies Handshake);
}

/**
 * streamUser: a bare UserProfile on open and when the user signs in or out (as the SDK types
 * the stream); signed out, an empty text frame.
 */
export async function streamUser(context: OperationContext) {
  handshake(context);
  const user = await localUser(context);
  return reply({ seq: 0, message: user ?? '' } satisfies Handshake);
}

/** osSettingsStream: the OSServerSettings on open and after each update (osSettingsUpdate logs an `osSettings` change). */
export async function osSettingsStream(context: OperationContext) {
  handshake(context);
  return reply({ seq: 0, message: await osSettings(context.service) } satisfies Handshake);
}

/** The vision status stream: the WorkstreamPatternEngineStatus on open and after each activate or deactivate (a `vision` change). */
export async function workstreamPatternEngineProcessorsVisionStatusStream(context: OperationContext) {
  handshake(context);
  return reply({ seq: 0, message: await currentVisionStatus(context.service) } satisfies Handshake);
}

/**
 * streamAppletVersion (`?applet_type=`, one of OSAppletEnum): the version of what serves that
 * applet here, as text on open: this service's own (osAppletLaunch names it every applet's
 * handler), which no request changes while it runs.
 */
export async function streamAppletVersion(context: OperationContext) {
  handshake(context);
  const type = context.url.searchParams.get('applet_type');
  if (type === null) throw badRequest('applet_type is required: the OSAppletEnum of the applet (?applet_type=COPILOT).');
  oneOf(type, OSAppletEnum, 'applet_type');
  return reply({ seq: 0, message: VERSION } satisfies Handshake);
}

/** workstreamSuggestionsStream: the WorkstreamSuggestions on open and after each change of the assets they are made from. */
export async function workstreamSuggestionsStream(context: OperationContext) {
  handshake(context);
  return reply({ seq: 0, message: await latestSuggestions(context.service) } satisfies Handshake);
}
