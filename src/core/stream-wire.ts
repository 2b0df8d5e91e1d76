/**
 * The wire between the service and the sockets it feeds: which paths are
 * sockets, the handshake and catch-up bodies the service answers on them, the
 * frames a socket sends, and the change announcements hosts broadcast. The
 * stream handlers write these shapes and the page's socket shim reads them,
 * from this one module.
 */
import type { Change, Collection } from '../storage/storage.js';
import type { MirrorStatus } from './mirror-spec.js';

/** Name of the BroadcastChannel on which a host announces committed changes. */
export const CHANGES_CHANNEL = 'pieces-os-worker:changes';

/** The header a socket's own requests carry: its handshake and catch-ups, or a copilot input. */
export const STREAM_HEADER = 'x-pieces-stream';
export type StreamRequestKind = 'handshake' | 'qgpt';

/** What a socket path carries: the identifiers of a collection, the health heartbeat, the user profile, the copilot's answers. */
export type SocketKind = Collection | 'health' | 'user' | 'copilot';

/**
 * The WebSocket paths the service serves, and what each carries (the route
 * table has a GET route for each: the handshake).
 */
export const SOCKETS: Readonly<Record<string, SocketKind>> = {
  '/conversations/stream/identifiers': 'conversation',
  '/messages/stream/identifiers': 'conversationMessage',
  '/assets/stream/identifiers': 'asset',
  '/applications/stream/identifiers': 'application',
  '/.well-known/stream/health': 'health',
  '/user/stream': 'user',
  /** The copilot's answers (its client frames travel as POSTs). */
  '/qgpt/stream': 'copilot',
};

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
export type MirrorMessage =
  | { type: 'mirror'; status: MirrorStatus }
  | { type: 'mirror-queued' }
  | { type: 'mirror-ask'; failed?: string };

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

/** A catch-up (`?after=N`): the collection's changes after N, whether the log still reaches back to N, and the last change. */
export interface CatchUp {
  changes: Change[];
  complete: boolean;
  seq: number;
  database: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

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

/** A socket's first frame on an identifier stream: every id of the collection (StreamedIdentifiers). */
export function identifiersFrame(collection: Collection, ids: readonly string[]) {
  return { iterable: ids.map((id) => ({ [collection]: { id } })) };
}

/** The frame for one change: a StreamedIdentifiers with one item. */
export function changeFrame(change: Change): string {
  return JSON.stringify({ iterable: [{ [change.collection]: { id: change.id }, ...(change.deleted ? { deleted: true } : {}) }] });
}
