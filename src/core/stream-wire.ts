/**
 * The wire between the service and the sockets it feeds (which paths, handshake and catch-up bodies,
 * frames, announcements): written by the stream handlers and read by the page's shim.
 */
import { KINDS } from '../shared/graph.js';
import type { Change, Collection, GenericKind, Logged } from '../storage/storage.js';
import type { MirrorStatus } from './mirror-spec.js';

/** Name of the BroadcastChannel on which a host announces committed changes. */
export const CHANGES_CHANNEL = 'pieces-os-worker:changes';

/** The header a socket's own requests carry: its handshake and catch-ups, or a copilot input. */
export const STREAM_HEADER = 'x-pieces-stream';
export type StreamRequestKind = 'handshake' | 'qgpt' | 'progress';

/**
 * The query parameter of a health socket's periodic handshake, its heartbeat: like a
 * catch-up (`?after=N`), a request of a socket already open, not a connection of its own.
 */
export const HEARTBEAT_PARAM = 'heartbeat';

/** A socket's own request after its handshake (a catch-up, a heartbeat): part of its connection. */
export const ofOpenSocket = (request: Request, url: URL): boolean =>
  request.headers.get(STREAM_HEADER) === 'handshake' && (url.searchParams.has('after') || url.searchParams.has(HEARTBEAT_PARAM));

/**
 * The streams of whole assets (Assets frames, not identifiers): `/assets/stream`, whose formats
 * come without their values, and `/assets/stream/transferables`, with them.
 */
export type WholeAssets = 'assets' | 'assetsWithValues';

/**
 * What a socket path carries: the identifiers of a collection, whole assets, the health heartbeat, the user
 * profile, the OS settings, the vision status, a model runtime's status, the copilot's answers, a model's download progress,
 * this service's applet version, the workstream's suggestions.
 */
export type SocketKind =
  | Collection
  | WholeAssets
  | 'health'
  | 'user'
  | 'osSettings'
  | 'vision'
  | 'ollamaStatus'
  | 'foundryStatus'
  | 'copilot'
  | 'progress'
  | 'appletVersion'
  | 'workstreamSuggestions';

/**
 * The WebSocket paths the service serves, and what each carries (the route
 * table has a GET route for each: the handshake): the identifier stream of
 * every kind the generic path stores (from the graph table), and these.
 */
export const SOCKETS: Readonly<Record<string, SocketKind>> = {
  ...Object.fromEntries(KINDS.flatMap((row) => (!row.own && row.ops.stream ? [[row.ops.stream.path, row.kind as GenericKind]] : []))),
  '/conversations/stream/identifiers': 'conversation',
  '/messages/stream/identifiers': 'conversationMessage',
  '/assets/stream/identifiers': 'asset',
  '/applications/stream/identifiers': 'application',
  '/activities/stream/identifiers': 'activity',
  '/anchors/stream/identifiers': 'anchor',
  '/annotations/stream/identifiers': 'annotation',
  '/formats/stream/identifiers': 'format',
  '/assets/stream': 'assets',
  '/assets/stream/transferables': 'assetsWithValues',
  '/models/stream/identifiers': 'model',
  '/tags/stream/identifiers': 'tag',
  '/websites/stream/identifiers': 'website',
  '/.well-known/stream/health': 'health',
  '/user/stream': 'user',
  '/os/settings/stream': 'osSettings',
  '/workstream_pattern_engine/processors/vision/status/stream': 'vision',
  '/ollama/status/stream': 'ollamaStatus',
  '/foundry/status/stream': 'foundryStatus',
  /** The copilot's answers (its client frames travel as POSTs). */
  '/qgpt/stream': 'copilot',
  /** The progress of backups made (src/core/handlers/backups.ts). */
  '/backups/create/streamed/websocket': 'progress',
  '/os/applet/version/stream': 'appletVersion',
  '/workstream/suggestions/stream': 'workstreamSuggestions',
};

/**
 * The collection whose changes change what a socket sends, where it is not the socket's own kind:
 * the whole assets' streams and the workstream's suggestions are made from the assets.
 */
export const FOLLOWS: Partial<Record<SocketKind, Logged>> = { assets: 'asset', assetsWithValues: 'asset', workstreamSuggestions: 'asset' };

/** The progress sockets with a parameter: a model's download (`/model/{model}/download/progress`), a backup's restorations. */
const PROGRESS_SOCKET = /^\/(model\/[^/]+\/download\/progress|backup\/[^/]+\/restore\/streamed\/websocket)$/;

/** What the socket at `path` (under a base, without a trailing slash) carries, if it is one of the service's. */
export function socketKind(path: string): SocketKind | undefined {
  if (Object.hasOwn(SOCKETS, path)) return SOCKETS[path];
  return PROGRESS_SOCKET.test(path) ? 'progress' : undefined;
}

/** A committed change, announced to the sockets of its collection. */
export interface ChangeMessage {
  type: 'change';
  change: Change;
}

/**
 * What a host says about itself on the same channel: `worker` when a worker
 * (of `version`) has taken over, `database` when it opened a new database
 * after losing the one it had (wiped: the change sequence starts again, under
 * a new identity).
 */
export type WorkerMessage = { type: 'worker'; version: string } | { type: 'database'; identity: string } | MirrorMessage;

/**
 * A mirrored Pieces OS, between the hosts of an origin: `mirror`, its status (from the one
 * host that replays: the worker, or the tab holding the replayer's lock); `mirror-queued`, a
 * host queued an operation (the replayer drains); `mirror-ask`, a host wants the status (it
 * just started), or the upstream failed it (`failed`: the replayer checks at once).
 */
export type MirrorMessage = { type: 'mirror'; status: MirrorStatus } | { type: 'mirror-queued' } | { type: 'mirror-ask'; failed?: string };

/**
 * A socket's handshake: its first frame (`message`, text or JSON) and the
 * change sequence number it reflects; for an identifier stream, the database's
 * identity (sequence numbers of two databases are not comparable).
 */
export interface Handshake {
  seq: number;
  message: unknown;
  database?: string;
}

/**
 * A catch-up (`?after=N`): the collection's changes after N, whether the log still reaches back to N, and the last change.
 * On a stream of whole assets, also each changed asset that still exists as it is now (`records`, by id), and
 * the time of the catch-up (`at`: a deleted asset's frame is stamped deleted then).
 */
export interface CatchUp {
  changes: Change[];
  complete: boolean;
  seq: number;
  database: string;
  records?: Record<string, unknown>;
  at?: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const isSeq = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

export function isChange(value: unknown): value is Change {
  return (
    isRecord(value) &&
    isSeq(value.seq) &&
    typeof value.collection === 'string' &&
    typeof value.id === 'string' &&
    (value.deleted === undefined || value.deleted === true)
  );
}

export function isHandshake(value: unknown): value is Handshake {
  return isRecord(value) && isSeq(value.seq) && (typeof value.message === 'string' || isRecord(value.message));
}

export function isCatchUp(value: unknown): value is CatchUp {
  return (
    isRecord(value) &&
    typeof value.complete === 'boolean' &&
    isSeq(value.seq) &&
    typeof value.database === 'string' &&
    Array.isArray(value.changes) &&
    value.changes.every(isChange)
  );
}

/** What a host broadcasts: a well-formed change announcement, a `database` notice, or nothing of ours (null). */
export function readAnnouncement(data: unknown): { change: Change } | { database: true } | null {
  if (!isRecord(data)) return null;
  if (data.type === 'database') return { database: true };
  return data.type === 'change' && isChange(data.change) ? { change: data.change } : null;
}

/** The key of each kind's items in a StreamedIdentifier on the wire where it is not its name (`workstream_summary`), from the graph table. */
const STREAMED = new Map(KINDS.flatMap((row) => (row.streamed && row.streamed !== row.kind ? [[row.kind as string, row.streamed]] : [])));

const streamKey = (collection: Logged): string => STREAMED.get(collection) ?? collection;

/** A socket's first frame on an identifier stream: every id of the collection (StreamedIdentifiers). */
export function identifiersFrame(collection: Collection, ids: readonly string[]) {
  const key = streamKey(collection);
  return { iterable: ids.map((id) => ({ [key]: { id } })) };
}

/** The frame for one change: a StreamedIdentifiers with one item. */
export function changeFrame(change: Change): string {
  return JSON.stringify({
    iterable: [{ [streamKey(change.collection)]: { id: change.id }, ...(change.deleted ? { deleted: true } : {}) }],
  });
}

/** A stream of whole assets: the collection it follows is the assets'. */
export const isWholeAssets = (kind: SocketKind): kind is WholeAssets => kind === 'assets' || kind === 'assetsWithValues';

/**
 * A catch-up's frames on a stream of whole assets (the changes after the socket's last): each
 * changed asset once, where its last change is, as it is now (an Assets of one); an asset gone
 * since, as it was last sent, its `deleted` stamped with the catch-up's time (one never sent, made
 * and deleted between two catch-ups, is not sent). `sent`: the JSON of each asset as last sent
 * (the first frame's, then these), kept up to date here.
 */
export function wholeAssetFrames(changes: readonly Change[], body: CatchUp, sent: Map<string, string>): string[] {
  const last = new Map<string, Change>();
  for (const change of changes) {
    last.delete(change.id);
    last.set(change.id, change);
  }
  const frames: string[] = [];
  for (const id of last.keys()) {
    const record = body.records?.[id];
    if (record !== undefined) {
      const text = JSON.stringify(record);
      sent.set(id, text);
      frames.push(`{"iterable":[${text}]}`);
      continue;
    }
    const before = sent.get(id);
    if (before === undefined) continue;
    sent.delete(id);
    const deleted = { value: body.at ?? new Date().toISOString() };
    frames.push(JSON.stringify({ iterable: [{ ...(JSON.parse(before) as object), deleted }] }));
  }
  return frames;
}
