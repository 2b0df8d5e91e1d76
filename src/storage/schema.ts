/**
 * The database: every store, its records and its indexes, and the numbered upgrade steps that
 * build them. Read this file to know what is stored; the records are in schema/records.ts, the
 * steps in schema/upgrades.ts (append, never edit).
 */
import type { DBSchema, IDBPDatabase, StoreNames } from 'idb';
import type {
  ActivityRecord,
  AnchorRecord,
  AnnotationRecord,
  ApplicationRecord,
  AssetRecord,
  ChangeRecord,
  ConversationRecord,
  EventKind,
  EventRecord,
  ExternalApplicationRecord,
  FormatRecord,
  IdPair,
  MaterialRecord,
  MessageRecord,
  ModelStateRecord,
  OutboxEntry,
  SearchIndexRecord,
  SessionRecord,
  SnapshotSegment,
  TagRecord,
  WebsiteRecord,
} from './schema/records.js';
import { materialStore, mirrorStores, UPGRADES, type UpgradeTransaction } from './schema/upgrades.js';

export type * from './schema/records.js';
export { descriptionAnnotationId, LEGACY_APPLICATION, UPGRADES } from './schema/upgrades.js';

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
  /** Materials of the kinds the generic path stores (GenericKind), by `[kind, id]`; listed by kind in creation order. */
  materials: { key: [string, string]; value: MaterialRecord; indexes: { 'by-kind-seq': [string, number] } };
}

export const DB_NAME = 'pieces-os-worker';

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
  materials: UPGRADES.indexOf(materialStore) + 1,
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
