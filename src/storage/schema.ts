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

/**
 * An asset (a saved snippet): its own fields and the ids of its formats. What hangs on it is kept
 * in its own stores, each record naming the asset: formats, annotations (`asset.id`), tags and
 * websites (`assets`).
 */
export interface AssetRecord {
  id: string;
  name: string;
  /** ISO-8601 times. */
  created: string;
  updated: string;
  /** The id of the application that created it. */
  creator: string;
  /** How it came to be (MechanismEnum): `MANUAL` for what a user saved. */
  mechanism: string;
  /** Its formats' ids, in order. */
  formats: string[];
  /** The format it was made from, and the one shown as its preview (may be the same). */
  original: string;
  preview: string;
  favorited?: boolean;
  discovered?: boolean;
  pseudo?: boolean;
  demo?: boolean;
}

/** One format of an asset: its value as text (or as bytes, when it is not text) and its classification. */
export interface FormatRecord {
  id: string;
  /** The asset it belongs to. */
  asset: string;
  /** Role: `ORIGINAL`, `PREVIEW`, `BOTH` or `ADDITIONAL`. */
  role: string;
  classification: { generic: string; specific: string; rendering?: string };
  /** The Application (wire JSON) that made it. */
  application: JsonObject & { id: string };
  created: string;
  updated: string;
  /** Where the value is on the wire: a fragment or a file. */
  kind: 'fragment' | 'file';
  text?: string;
  bytes?: Uint8Array;
  /** Size of the value in bytes (UTF-8 for text). */
  size: number;
}

/** An Annotation as the wire writes it (`asset` a reference `{id}`, times GroupedTimestamps). */
export type AnnotationRecord = JsonObject & { id: string; type: string; text: string; asset?: { id: string } };

/** A tag, with the ids of the assets it is on. */
export interface TagRecord {
  id: string;
  text: string;
  /** TagCategoryEnum. */
  category: string;
  created: string;
  updated: string;
  mechanism?: string;
  assets: string[];
}

/** A website, with the ids of the assets it is on. */
export interface WebsiteRecord {
  id: string;
  url: string;
  name: string;
  created: string;
  updated: string;
  mechanism?: string;
  assets: string[];
}

/** Something that happened to an asset or a conversation (an Activity without its joined records). */
export interface ActivityRecord {
  id: string;
  created: string;
  /** The order activities are listed in: `created`, then the order they were recorded in (`created|counter`). */
  order: string;
  /** The SeededConnectorTracking (wire JSON): `asset` or `conversation` with its identifier-description pair. */
  event: JsonObject;
  /** The Application (wire JSON) that did it. */
  application: JsonObject & { id: string };
  mechanism: string;
  /** The asset it concerns, while that asset exists. */
  asset?: string;
}

/** A search index as kept: what it is made of and the last change it reflects. */
export interface SearchIndexRecord {
  /** The last change folded into it. */
  seq: number;
  /** The index and its documents, as the search code saved them. */
  value: unknown;
}

/**
 * An anchor (a file or folder a conversation or an asset is about), as its wire
 * Anchor JSON text, with its creation time for the snapshot order. The one
 * record of an anchor, whether it was created on its own or with a conversation.
 */
export interface AnchorRecord {
  id: string;
  /** The order of the anchors snapshot: the ISO-8601 creation time (anchors created together: `#` and their position). */
  created: string;
  /** The wire Anchor (with its points), as JSON text. */
  json: string;
}

/** A catalogue model's local state, where it differs from the catalogue's (a download done). */
export interface ModelStateRecord {
  id: string;
  downloaded: boolean;
}

/**
 * What a queued operation's ids name: the collections with an identifier stream, sessions, and
 * what hangs on an asset (ids the upstream assigns and later operations name).
 */
export type RecordKind = Collection | 'session' | 'format' | 'annotation' | 'tag' | 'website';

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
export type Collection = 'conversation' | 'conversationMessage' | 'asset' | 'application' | 'activity' | 'anchor' | 'range' | 'model';

/**
 * What the change log records changes of: the collections, and the local user's
 * profile (`user`, id `local`: signed in or out), whose socket sends the profile again.
 */
export type Logged = Collection | 'user';

export interface ChangeRecord {
  seq?: number;
  collection: Logged;
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
  /** Formats of assets (their values). */
  formats: { key: string; value: FormatRecord; indexes: { 'by-asset': string } };
  /** Annotations (of assets, by `asset.id`, and on their own). */
  annotations: { key: string; value: AnnotationRecord; indexes: { 'by-asset': string } };
  tags: { key: string; value: TagRecord; indexes: { 'by-text': string; 'by-asset': string } };
  websites: { key: string; value: WebsiteRecord; indexes: { 'by-url': string; 'by-asset': string } };
  /** Activities, oldest first (`order`). */
  activities: { key: string; value: ActivityRecord; indexes: { 'by-created': string; 'by-asset': string } };
  /**
   * Search indexes kept for a cold start, by name (derived from the records: rebuilt when
   * missing or too old for the change log to bring up to date).
   */
  search: { key: string; value: SearchIndexRecord };
  /** The change log every identifier stream is built on (auto-incremented `seq`). */
  changes: { key: number; value: ChangeRecord };
  /** Applications a page reported as present on the machine. */
  external: { key: string; value: ExternalApplicationRecord };
  /** Conversations snapshots kept ready to send, in segments (derived from the records above). */
  snapshots: { key: [number, number]; value: SnapshotSegment };
  /** Small named values (e.g. the id of the browser's own application). */
  meta: { key: string; value: unknown };
  /** Anchors, by id; listed in creation order. */
  anchors: { key: string; value: AnchorRecord; indexes: { 'by-created': string } };
  /** The catalogue models' local state (downloaded). */
  models: { key: string; value: ModelStateRecord };
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
      // (Assets got a format id here; step 7 now converts them whole, format id included: two
      // cursors rewriting the same records in one transaction would race.)
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
  // 6: anchors as records of their own (those stored inside conversations are copied out, each
  // listing the conversations it came with) and the catalogue models' local state.
  (db, tx) => {
    db.createObjectStore('anchors', { keyPath: 'id' }).createIndex('by-created', 'created');
    db.createObjectStore('models', { keyPath: 'id' });
    const copy = async () => {
      const anchors = new Map<string, Record<string, unknown>>();
      let cursor = await tx.objectStore('conversations').openCursor();
      while (cursor) {
        // Read as step 4 leaves it (its rewrite may not have reached this record yet, in the same upgrade).
        const { conversation, json } = cursor.value as PiecesDB['conversations']['value'] & { conversation?: unknown };
        for (const anchor of anchorsOf(wholeNestedModels(json ?? JSON.stringify(conversation)))) {
          const conversations = (anchors.get(anchor.id as string)?.conversations as { iterable: Array<{ id: string }> } | undefined)?.iterable ?? [];
          const own = (anchor.conversations as { iterable?: Array<{ id: string }> } | undefined)?.iterable ?? [];
          const ids = [...new Set([...conversations, ...own, { id: cursor.value.id }].map((c) => c.id))];
          anchors.set(anchor.id as string, { ...anchor, conversations: { iterable: ids.map((id) => ({ id })) } });
        }
        cursor = await cursor.continue();
      }
      const store = tx.objectStore('anchors');
      for (const anchor of anchors.values()) {
        const created = (anchor.created as { value?: unknown } | undefined)?.value;
        await store.put({ id: anchor.id as string, created: typeof created === 'string' ? created : '', json: JSON.stringify(anchor) });
      }
    };
    // A failed copy aborts the upgrade: the database stays at version 5, unharmed.
    copy().catch(() => tx.abort());
  },
  // 7: assets made whole: formats, annotations, tags, websites and activities in stores of their own;
  // each asset stored before (one text, a language, a description) becomes an asset record, its one
  // format (original and preview) and a DESCRIPTION annotation.
  (db, tx) => {
    db.createObjectStore('formats', { keyPath: 'id' }).createIndex('by-asset', 'asset');
    db.createObjectStore('annotations', { keyPath: 'id' }).createIndex('by-asset', 'asset.id');
    const tags = db.createObjectStore('tags', { keyPath: 'id' });
    tags.createIndex('by-text', 'text');
    tags.createIndex('by-asset', 'assets', { multiEntry: true });
    const websites = db.createObjectStore('websites', { keyPath: 'id' });
    websites.createIndex('by-url', 'url');
    websites.createIndex('by-asset', 'assets', { multiEntry: true });
    const activities = db.createObjectStore('activities', { keyPath: 'id' });
    activities.createIndex('by-created', 'order');
    activities.createIndex('by-asset', 'asset');
    db.createObjectStore('search');
    const rewrite = async () => {
      let cursor = await tx.objectStore('assets').openCursor();
      while (cursor) {
        const old = cursor.value as unknown as LegacyAsset;
        if (typeof old.text === 'string') {
          const whole = wholeAsset({ ...old, formatId: old.formatId ?? randomUUID() });
          await Promise.all([
            cursor.update(whole.record),
            tx.objectStore('formats').put(whole.format),
            ...(whole.annotation ? [tx.objectStore('annotations').put(whole.annotation)] : []),
          ]);
        }
        cursor = await cursor.continue();
      }
    };
    rewrite().catch(() => tx.abort());
  },
  // 8: a mirrored Pieces OS: the outbox of operations queued while it was away, and the map of
  // ids created locally to the ids it gave them.
  mirrorStores,
];

/** An asset as stored before step 7: one text, its language, a description. */
interface LegacyAsset {
  id: string;
  name: string;
  language: string;
  text: string;
  created: string;
  description?: string;
  formatId: string;
}

/** The application that made the records of assets stored before step 7 (the service's own, `OS_SERVER`). */
export const LEGACY_APPLICATION = {
  id: 'a0b1c2d3-0000-4000-8000-00000000c0de',
  name: 'OS_SERVER',
  version: '1',
  platform: 'WEB',
  onboarded: true,
  privacy: 'OPEN',
  capabilities: 'LOCAL',
  mechanism: 'INTERNAL',
} as const;

/** Step 7's conversion of an asset stored before it; the annotation's id is derived from the asset's. */
function wholeAsset(old: LegacyAsset): { record: AssetRecord; format: FormatRecord; annotation?: AnnotationRecord } {
  const stamp = { value: old.created };
  return {
    record: {
      id: old.id,
      name: old.name,
      created: old.created,
      updated: old.created,
      creator: LEGACY_APPLICATION.id,
      mechanism: 'MANUAL',
      formats: [old.formatId],
      original: old.formatId,
      preview: old.formatId,
    },
    format: {
      id: old.formatId,
      asset: old.id,
      role: 'BOTH',
      classification: { generic: 'CODE', specific: old.language },
      application: { ...LEGACY_APPLICATION },
      created: old.created,
      updated: old.created,
      kind: 'fragment',
      text: old.text,
      size: new TextEncoder().encode(old.text).byteLength,
    },
    ...(old.description
      ? {
          annotation: {
            id: descriptionAnnotationId(old.id),
            created: stamp,
            updated: stamp,
            type: 'DESCRIPTION',
            text: old.description,
            mechanism: 'MANUAL',
            asset: { id: old.id },
          },
        }
      : {}),
  };
}

/**
 * The id of the DESCRIPTION annotation made for an asset stored before step 7 (the id its
 * description was answered with before): a stable UUID-shaped hash of the asset id.
 */
export function descriptionAnnotationId(assetId: string): string {
  const seed = `description:${assetId}`;
  let hex = '';
  for (let lane = 0; lane < 4; lane++) {
    let h = 0x811c9dc5 ^ lane;
    for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 0x01000193);
    hex += (h >>> 0).toString(16).padStart(8, '0');
  }
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The whole anchors (with `points`) a stored conversation's JSON holds. */
function anchorsOf(text: string): Array<Record<string, unknown>> {
  const conversation = JSON.parse(text) as { anchors?: { iterable?: Array<{ id?: unknown; reference?: Record<string, unknown> }> } };
  return (conversation.anchors?.iterable ?? []).flatMap((item) =>
    item.reference && typeof item.reference.id === 'string' && item.reference.points ? [item.reference] : [],
  );
}

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
  anchors: 6,
  models: 6,
  formats: 7,
  annotations: 7,
  tags: 7,
  websites: 7,
  activities: 7,
  search: 7,
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
