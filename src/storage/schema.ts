/**
 * The database: every store, its records and its indexes, and the numbered
 * upgrade steps that build them. Read this file to know what is stored.
 */
import type { DBSchema, IDBPDatabase, IDBPTransaction, StoreNames } from 'idb';
import type { JsonObject } from '../shared/json.js';
import { randomUUID } from '../shared/uuid.js';


export type EventKind = 'interaction' | 'keyboard' | 'installation' | 'update';

/** An Application exactly as registered (wire JSON, keyed by its id). */
export type ApplicationRecord = JsonObject & { id: string };

export interface SessionRecord {
  id: string;
  opened: { value: string; readable?: string };
  closed?: { value: string; readable?: string };
  /** The application named by `X-Application-ID` when the session was opened. */
  application?: string;
}

export interface EventRecord {
  id: string;
  kind: EventKind;
  /** ISO-8601 time the event was recorded. */
  at: string;
  /** The application the event is scoped to, if any. */
  application?: string;
  /** The body as received (the Seeded/Tracked form). */
  payload: JsonObject;
}

/**
 * A conversation without its messages, plus the ordered ids of its messages.
 * Kept as its wire JSON text: snapshots are composed from stored text, with
 * no object graph to rebuild or re-encode.
 */
export interface ConversationRecord {
  id: string;
  /** Change-sequence number of the conversation's creation: the snapshot order. */
  seq: number;
  /** The wire Conversation minus `messages`, as JSON text. */
  json: string;
  messageIds: string[];
  /** Ids of messages deleted from the conversation (their `indices` entry is -1). */
  deletedMessageIds?: string[];
}

export interface MessageRecord {
  id: string;
  conversation: string;
  /** The wire FlattenedConversationMessage, as JSON text. */
  json: string;
}

export interface AssetRecord {
  id: string;
  name: string;
  /** File extension of the language, e.g. `ts`, `py`. */
  language: string;
  text: string;
  created: string;
  description?: string;
  /** Id of the asset's one format (its original and preview). */
  formatId: string;
}

/**
 * What a queued operation's ids name: the collections with an identifier stream, and sessions
 * (ids the upstream assigns and later operations name).
 */
export type RecordKind = Collection | 'session';

/** A record an operation created locally (its kind and id), in the order the write lists them. */
export interface CreatedId {
  kind: RecordKind;
  id: string;
}

/**
 * An operation of the route table, queued for a mirrored Pieces OS while it could not be
 * reached: written in the transaction of the local write it made (see Storage), replayed
 * in `seq` order. Its arguments as the client gave them: path parameters, query, JSON
 * body and the `application` header.
 */
export interface OutboxEntry {
  seq: number;
  operation: string;
  params: Record<string, string>;
  query?: string;
  body?: unknown;
  application?: string;
  /** The records the local write created (their ids are rewritten once the upstream gives its own). */
  created: CreatedId[];
  /**
   * `queued`; `sent`: sent at least once without a known outcome (a create is looked for on the
   * upstream before it is sent again); `set-aside`: refused by the upstream, kept to be reported.
   */
  state: 'queued' | 'sent' | 'set-aside';
  /** ISO-8601 time it was queued. */
  at: string;
  /** ISO-8601 time it was first sent (a create looked for is one made after it). */
  sentAt?: string;
  /** Why the upstream refused it (state `set-aside`). */
  refused?: { status: number; message: string; id: string };
}

/** A record created locally and the id the upstream gave it: later operations naming `local` are sent with `upstream`. */
export interface IdPair {
  local: string;
  upstream: string;
  kind: RecordKind;
}

/** The collections with an identifier stream; the names are StreamedIdentifier's keys. */
export type Collection = 'conversation' | 'conversationMessage' | 'asset' | 'application';

export interface ChangeRecord {
  seq?: number;
  collection: Collection;
  id: string;
  deleted?: true;
}

/**
 * One segment of a Conversations snapshot kept ready to send: the wire JSON of
 * the conversations whose snapshot order (`seq`) lies in [start, end), joined
 * by commas, as it goes out. The segments of a variant partition all sequence
 * numbers (the first starts at 0, each ends where the next starts, the last
 * ends at SEGMENT_END). A segment is true as of change `built`: a later change
 * of one of its conversations (or a conversation created in its range) makes
 * it stale, and it is rebuilt from the records when next read (see snapshots.ts).
 */
export interface SnapshotSegment {
  /** 1: with message references (`transferables=true`); 0: ids only. */
  variant: 0 | 1;
  start: number;
  end: number;
  /** The last change folded into the segment. */
  built: number;
  /** Ids of the conversations in it, in order. */
  ids: string[];
  /** The conversations' wire JSON, comma-joined (UTF-8 in a Blob where the database stores Blobs). */
  body: Blob | string;
}

export interface ExternalApplicationRecord {
  name: string;
  version?: string;
}

export interface PiecesDB extends DBSchema {
  applications: { key: string; value: ApplicationRecord };
  sessions: { key: string; value: SessionRecord };
  events: {
    key: string;
    value: EventRecord;
    indexes: {
      /** Counts by kind for one application. */
      'by-application-kind': [string, EventKind];
      /** Last activity of one application. */
      'by-application-at': [string, string];
      /** Counts by kind inside a session's time window. */
      'by-kind-at': [EventKind, string];
    };
  };
  conversations: { key: string; value: ConversationRecord; indexes: { 'by-seq': number } };
  messages: { key: string; value: MessageRecord; indexes: { 'by-conversation': string } };
  /** Assets to start conversations from (the sample assets and those a page adds). */
  assets: { key: string; value: AssetRecord; indexes: { 'by-name': string } };
  /** The change log every identifier stream is built on (auto-incremented `seq`). */
  changes: { key: number; value: ChangeRecord };
  /** Applications a page reported as present on the machine. */
  external: { key: string; value: ExternalApplicationRecord };
  /** Conversations snapshots kept ready to send, in segments (derived from the records above). */
  snapshots: { key: [number, number]; value: SnapshotSegment };
  /** Small named values (e.g. the id of the browser's own application). */
  meta: { key: string; value: unknown };
  /** Operations queued for a mirrored Pieces OS, in order (auto-incremented `seq`). */
  outbox: { key: number; value: OutboxEntry };
  /** Ids of records created locally → the ids the mirrored Pieces OS gave them. */
  idmap: { key: string; value: IdPair };
}

export const DB_NAME = 'pieces-os-worker';

type UpgradeTransaction = IDBPTransaction<PiecesDB, StoreNames<PiecesDB>[], 'versionchange'>;
type UpgradeStep = (db: IDBPDatabase<PiecesDB>, tx: UpgradeTransaction) => void;

/** The mirror's stores (see mirrorStores below): the step's number is its place in UPGRADES. */
const mirrorStores: UpgradeStep = (db) => {
  db.createObjectStore('outbox', { keyPath: 'seq', autoIncrement: true });
  db.createObjectStore('idmap', { keyPath: 'local' });
};

/** Step N brings a database from version N-1 to version N. Append, never edit. */
export const UPGRADES: UpgradeStep[] = [
  // 1: the initial layout.
  (db) => {
    db.createObjectStore('applications', { keyPath: 'id' });
    db.createObjectStore('sessions', { keyPath: 'id' });
    const events = db.createObjectStore('events', { keyPath: 'id' });
    events.createIndex('by-application-kind', ['application', 'kind']);
    events.createIndex('by-application-at', ['application', 'at']);
    events.createIndex('by-kind-at', ['kind', 'at']);
    const conversations = db.createObjectStore('conversations', { keyPath: 'id' });
    conversations.createIndex('by-seq', 'seq', { unique: true });
    const messages = db.createObjectStore('messages', { keyPath: 'id' });
    messages.createIndex('by-conversation', 'conversation');
    db.createObjectStore('assets', { keyPath: 'id' });
    db.createObjectStore('changes', { keyPath: 'seq', autoIncrement: true });
    db.createObjectStore('external', { keyPath: 'name' });
    db.createObjectStore('meta');
  },
  // 2: assets listed by name (assetsIdentifiersSnapshot's order).
  (_db, tx) => {
    tx.objectStore('assets').createIndex('by-name', 'name');
  },
  // 3: conversations and messages kept as their wire JSON text (was: objects).
  (_db, tx) => {
    const rewrite = async (name: 'conversations' | 'messages', from: string) => {
      let cursor = await tx.objectStore(name).openCursor();
      while (cursor) {
        const { [from]: value, ...rest } = cursor.value as unknown as Record<string, unknown>;
        if (value !== undefined) await cursor.update({ ...rest, json: JSON.stringify(value) } as never);
        cursor = await cursor.continue();
      }
    };
    // A failed rewrite aborts the upgrade: the database stays at version 2, unharmed.
    Promise.all([rewrite('conversations', 'conversation'), rewrite('messages', 'message')]).catch(() => tx.abort());
  },
  // 4: one change log for every collection ({collection, id}; was {conversation}); assets get a
  // format id; seeded anchors and annotations stored before are made whole (anchor `points`,
  // annotation references as `{id}`).
  (_db, tx) => {
    const each = async <N extends 'changes' | 'assets' | 'conversations'>(name: N, fix: (value: PiecesDB[N]['value']) => PiecesDB[N]['value'] | null) => {
      let cursor = await tx.objectStore(name).openCursor();
      while (cursor) {
        const fixed = fix(cursor.value as PiecesDB[N]['value']);
        if (fixed) await cursor.update(fixed as never);
        cursor = await cursor.continue();
      }
    };
    const steps = Promise.all([
      each('changes', (value) => {
        const { conversation, ...rest } = value as ChangeRecord & { conversation?: string };
        return conversation === undefined ? null : { ...rest, collection: 'conversation', id: conversation };
      }),
      each('assets', (value) => (value.formatId ? null : { ...value, formatId: randomUUID() })),
    ]).then(() =>
      // After the rest, so that a database coming from version 2 has its step-3 rewrite done first.
      each('conversations', (value) => {
        const { conversation, ...rest } = value as PiecesDB['conversations']['value'] & { conversation?: unknown };
        const text = value.json ?? JSON.stringify(conversation);
        const json = wholeNestedModels(text);
        return json === value.json ? null : { ...rest, json };
      }),
    );
    steps.catch(() => tx.abort());
  },
  // 5: Conversations snapshots kept ready to send, by variant and range of snapshot order.
  (db) => {
    db.createObjectStore('snapshots', { keyPath: ['variant', 'start'] });
  },
  // 9: a mirrored Pieces OS: the outbox of operations queued while it was away, and the map of
  // ids created locally to the ids it gave them.
  mirrorStores,
];

/** Step 4's repair of a stored conversation's JSON: anchors get `points`, annotation links become `{id}`. */
function wholeNestedModels(text: string): string {
  const conversation = JSON.parse(text) as Record<string, { iterable?: Array<{ reference?: Record<string, unknown> }> }>;
  let changed = false;
  for (const item of conversation.anchors?.iterable ?? []) {
    const anchor = item.reference;
    if (anchor && !anchor.points) {
      // The anchor's path becomes its one point, as anchors are stored now.
      const { fullpath, platform, ...rest } = anchor;
      const point = { id: randomUUID(), fullpath, created: anchor.created, updated: anchor.updated, anchor: { id: anchor.id }, ...(platform ? { platform } : {}) };
      item.reference = { ...rest, points: { iterable: typeof fullpath === 'string' ? [{ id: point.id, reference: point }] : [] } };
      changed = true;
    }
  }
  for (const item of conversation.annotations?.iterable ?? []) {
    const annotation = item.reference;
    for (const key of ['asset', 'person', 'model', 'anchor', 'conversation'] as const) {
      if (annotation && typeof annotation[key] === 'string') {
        annotation[key] = { id: annotation[key] };
        changed = true;
      }
    }
  }
  return changed ? JSON.stringify(conversation) : text;
}

export const DB_VERSION = UPGRADES.length;

/** Every store of the layout, with the version that added it. */
export const STORES: Record<StoreNames<PiecesDB>, number> = {
  applications: 1,
  sessions: 1,
  events: 1,
  conversations: 1,
  messages: 1,
  assets: 1,
  changes: 1,
  external: 1,
  meta: 1,
  snapshots: 5,
  outbox: UPGRADES.indexOf(mirrorStores) + 1,
  idmap: UPGRADES.indexOf(mirrorStores) + 1,
};

/** The stores a database at `version` must have and `db` lacks. */
export const missingStores = (db: { objectStoreNames: DOMStringList }, version = DB_VERSION) =>
  Object.entries(STORES)
    .filter(([name, since]) => since <= version && !db.objectStoreNames.contains(name))
    .map(([name]) => name);

/**
 * Runs the steps from `oldVersion` to the current version. A database whose
 * stores do not match its version (an empty one of the same name, made by a
 * stray `indexedDB.open(name)` after a wipe) has nothing of ours to keep: its
 * stores are dropped and every step runs from the start.
 */
export function upgrade(db: IDBPDatabase<PiecesDB>, oldVersion: number, tx: UpgradeTransaction): void {
  const run = (from: number) => {
    for (let step = from; step < DB_VERSION; step++) UPGRADES[step]!(db, tx);
  };
  if (oldVersion > 0 && missingStores(db, oldVersion).length) {
    for (const name of [...db.objectStoreNames]) db.deleteObjectStore(name);
    run(0);
  } else {
    run(oldVersion);
  }
}
