/**
 * The storage interface the service core is written against. Every method is
 * one IndexedDB transaction: a write that touches several records commits or
 * fails as a whole.
 */
import type {
  ActivityRecord,
  AnnotationRecord,
  AnchorRecord,
  ApplicationRecord,
  AssetRecord,
  Collection,
  ConversationRecord,
  CreatedId,
  EventRecord,
  ExternalApplicationRecord,
  FormatRecord,
  GenericKind,
  IdPair,
  Logged,
  MaterialRecord,
  MessageRecord,
  ModelStateRecord,
  OutboxEntry,
  RecordKind,
  SessionRecord,
  TagRecord,
  WebsiteRecord,
} from './schema.js';
import type { MaterialKind } from '../shared/graph.js';
import type { JsonObject } from '../shared/json.js';

/** The meta key of the local user's signed-in state (see setSignedIn). */
export const SIGNED_IN_KEY = 'signedIn';

/** The meta keys of the local identity (its users, logged as `user` changes) and of its authorization server's grants. */
export const IDENTITY_KEY = 'localIdentity';
export const AUTHORIZATION_KEY = 'localAuthorization';

/** The meta key of the OS settings (OSApi's osSettingsUpdate; a change of them is logged as `osSettings`). */
export const OS_SETTINGS_KEY = 'osSettings';
/** The meta key of the OS permissions granted by a request (OSApi's osPermissionsRequest): `{vision?: true, accessibility?: true}`. */
export const OS_PERMISSIONS_KEY = 'osPermissions';
/**
 * The meta key of a backup's kept content (the data format of the store when it was made) and of
 * its last restoration's status: they go with the backup's record (a `backup` material).
 */
export const backupKeys = (id: string) => ({ content: `backup:${id}`, restored: `backup-restored:${id}` });

/**
 * The meta keys of the workstream pattern engine's vision processor: its status (a change of it is
 * logged as `vision`), the vision events it recorded, and its calibrations. A reset clears them.
 */
export const VISION_KEYS = { status: 'visionStatus', events: 'visionEvents', calibrations: 'visionCalibrations' } as const;

/** Engagement derived from stored usage events. */
export interface Engagement {
  interactions: number;
  keyboard: number;
  installations: number;
  updates: number;
  /** Time of the latest event, if any. */
  lastActivity?: { value: string };
}

/** One committed change of one record of a collection, numbered in commit order. */
export interface Change {
  seq: number;
  collection: Logged;
  id: string;
  deleted?: true;
}

/** A conversation record and its messages, in order. */
export interface ConversationState {
  record: ConversationRecord;
  messages: MessageRecord[];
}

/** What an edit of a conversation writes: the new record, and the messages it puts or deletes. */
export interface ConversationEdit {
  record: Omit<ConversationRecord, 'seq'>;
  putMessages?: MessageRecord[];
  deleteMessages?: string[];
}

/** Which conversation an edit is about: by its id, or by the id of one of its messages. */
export type ConversationTarget = { conversation: string } | { message: string };

export interface ConversationList {
  conversations: ConversationRecord[];
  /** Present when messages were asked for: every message of the listed conversations. */
  messages?: Map<string, MessageRecord>;
}

/** An asset with everything that hangs on it, read in one transaction. */
export interface StoredAsset {
  record: AssetRecord;
  /** In the record's order. */
  formats: FormatRecord[];
  /** Oldest first. */
  annotations: AnnotationRecord[];
  tags: TagRecord[];
  websites: WebsiteRecord[];
  /** The anchors its record lists, in its order (read with it; a write of the asset ignores them: see editAnchor). */
  anchors?: AnchorRecord[];
  /** What its record's `links` name, whole as their wire JSON, by the Asset's field (read with it: src/storage/idb/links.ts). */
  linked?: Record<string, JsonObject[]>;
}

/**
 * An asset to write whole: its records, and the tags and websites to put it on (a stored tag of
 * the same text, a stored website of the same URL, is used instead of a new one).
 */
export type NewAsset = StoredAsset;

/** Which asset an edit is about: by its id, or by the id of one of its formats or annotations. */
export type AssetTarget = { asset: string } | { format: string } | { annotation: string };

/** What an edit of an asset writes. */
export interface AssetEdit {
  record: AssetRecord;
  putFormats?: FormatRecord[];
  putAnnotations?: AnnotationRecord[];
  deleteAnnotations?: string[];
  /** Tags to put the asset on (a stored tag of the same text is used instead), and tag ids to take it off. */
  addTags?: TagRecord[];
  removeTags?: string[];
  addWebsites?: WebsiteRecord[];
  removeWebsites?: string[];
  activities?: ActivityRecord[];
}

/** Every record a store holds, as stored: what `dumpData` reads and `loadData` writes. */
export interface StoredData {
  applications: ApplicationRecord[];
  sessions: SessionRecord[];
  events: EventRecord[];
  /** In snapshot order, each with its messages in conversation order. */
  conversations: Array<{ conversation: Omit<ConversationRecord, 'seq'>; messages: MessageRecord[] }>;
  assets: AssetRecord[];
  formats: FormatRecord[];
  annotations: AnnotationRecord[];
  tags: TagRecord[];
  websites: WebsiteRecord[];
  activities: ActivityRecord[];
  external: ExternalApplicationRecord[];
  /** In creation order. */
  anchors: AnchorRecord[];
  models: ModelStateRecord[];
  /**
   * Materials of the generic kinds, each kind in creation order (absent: none). Without `seq`: a
   * loaded material is listed in the order given (one stored before keeps its place, unless replaced).
   */
  materials?: Array<Omit<MaterialRecord, 'seq'>>;
}

/** Which material: its kind and id. */
export interface MaterialKey {
  kind: GenericKind;
  id: string;
}

/**
 * What an edit of materials writes: whole records to put (a new one gets `seq` = its change's;
 * a stored one keeps its own), and records to delete.
 */
export interface MaterialEdit {
  put?: Array<Omit<MaterialRecord, 'seq'> & { seq?: number }>;
  delete?: MaterialKey[];
}

/** The key of a material in the maps `editMaterials` gives: `${kind}/${id}`. */
export const materialKey = ({ kind, id }: MaterialKey) => `${kind}/${id}`;

/** A record of any kind of the material graph (src/shared/graph.ts), by kind and id. */
export interface LinkKey {
  kind: MaterialKind;
  id: string;
}

/**
 * A record as an association sees it (src/storage/idb/links.ts): its wire model's reference fields
 * (`{iterable: [{id}]}` lists, dotted keys nested), `updated` (a GroupedTimestamp), and for a record
 * kept as wire JSON its other fields too (written back as given).
 */
export interface LinkedRecord extends LinkKey {
  value: JsonObject & { id: string };
}

/**
 * What `editLinks` writes: records read (their reference fields as `value` gives them), and
 * generic materials to delete (unlisted from every record of any kind that lists them, those
 * stamped `updated` = `stamp`).
 */
export interface LinkEdit {
  put?: LinkedRecord[];
  delete?: MaterialKey[];
  stamp?: string;
}

/**
 * What an edit of an anchor writes: the anchor (null: delete it), and the
 * conversations and assets whose anchors change with it (their whole new records).
 */
export interface AnchorEdit {
  anchor: AnchorRecord | null;
  conversations?: Array<Omit<ConversationRecord, 'seq'>>;
  assets?: AssetRecord[];
}

/** The records an edit of an anchor reads with it: conversations and assets, by id. */
export interface AnchorLinks {
  conversations?: readonly string[];
  assets?: readonly string[];
}

/** What `editAnchor` found of the records `linked` named (only those that exist). */
export interface AnchorLinked {
  conversations: Map<string, ConversationRecord>;
  assets: Map<string, AssetRecord>;
}

/** The records of their own stores that assets list by their text or URL: tags and websites. */
export type LinkedKind = 'tag' | 'website';
export interface LinkedRecords {
  tag: TagRecord;
  website: WebsiteRecord;
}

/**
 * Which tag (website) an edit is about: by its id, or by its text (URL); `assets`, more assets to
 * read with it (beside those it lists).
 */
export type LinkedTarget = ({ id: string } | { key: string }) & { assets?: readonly string[] };

/** What an edit of a tag (website) writes: the record (null: delete it), and the assets that change with it (whole). */
export interface LinkedEdit<K extends LinkedKind> {
  record: LinkedRecords[K] | null;
  assets?: AssetRecord[];
}

/** An operation to queue for a mirrored Pieces OS, as a write appends it to the outbox. */
export type OutboxInput = Omit<OutboxEntry, 'seq' | 'state' | 'refused'> & { state?: 'queued' | 'sent' };

/**
 * One request's operation to queue for a mirrored Pieces OS (see `Storage.queueing`). A write of
 * records takes it as it starts, appends it to the outbox in its own transaction if it writes
 * something (so that it is queued if and only if that write commits), and settles it when done.
 */
export interface OutboxScope {
  /** The operation for a write that starts; undefined when an earlier write of the request has it (queued it, or is making it). */
  take(): PendingOperation | undefined;
}

export interface PendingOperation {
  /** The entry to append, with the ids of the records the write creates (in the order each write's doc gives). */
  entry(created: readonly CreatedId[]): OutboxInput;
  /**
   * The write is done: `queued` when it committed with the entry; otherwise (it found nothing to
   * change, or failed) the next write of the request may queue the operation.
   */
  settle(queued: boolean): void;
}

/** The writes of records that queue a request's operation (see `Storage.queueing`). */
export type QueueingWrite =
  | 'putApplication'
  | 'recordEvent'
  | 'putSession'
  | 'closeSession'
  | 'createConversation'
  | 'deleteConversation'
  | 'editConversation'
  | 'editAnchor'
  | 'putAssets'
  | 'createAsset'
  | 'editAsset'
  | 'deleteAsset'
  | 'putAnnotation'
  | 'deleteAnnotation'
  | 'editActivity'
  | 'editMaterials'
  | 'editLinked'
  | 'editLinks';

/**
 * What the mirror writes in one transaction: records as the upstream has them, records it no
 * longer has, local records re-keyed to the ids the upstream gave them, the outbox and the
 * id map. Changes are logged for what differs, so that sockets hear of real changes only.
 */
export interface MirrorBatch {
  /**
   * Records as the upstream has them, each replacing the stored one of its id; `messages` one by
   * one, each in its stored conversation (added at its end when new there; none if the
   * conversation is not stored).
   */
  put?: Partial<Pick<StoredData, 'applications' | 'sessions' | 'conversations' | 'anchors' | 'activities' | 'annotations'>> & {
    /** Assets whole: each replaces the stored one with what hangs on it (its formats, annotations, its place on tags and websites). */
    assets?: StoredAsset[];
    messages?: MessageRecord[];
    /** Materials of the generic kinds, each replacing the stored one of its kind and id (a new one listed last). */
    materials?: Array<Omit<MaterialRecord, 'seq'>>;
  };
  /** Records the upstream no longer has (a conversation with its messages, an asset with what hangs on it, a material). */
  remove?: Array<{ kind: RecordKind; id: string }>;
  /**
   * These kinds become exactly the records `put` gives, plus the ids in `keep`, plus the records
   * the outbox's entries created that the id map does not map yet (not on the upstream: read in
   * this transaction, so that a write queued meanwhile is never dropped).
   */
  replace?: { kinds: Array<'conversation' | 'application' | 'asset' | 'anchor' | 'activity' | GenericKind>; keep: readonly string[] };
  /**
   * Local records the upstream now has under its own ids: each is re-keyed (a conversation's
   * messages follow it; what names an application follows it; an asset's formats, annotations,
   * places on tags and websites and activities follow it; the conversations that list an anchor
   * list it under its new id; a material keeps its place in its kind's list, and every material
   * that lists a re-keyed record of any kind lists its new id), logged as the local id deleted and
   * the upstream id added, and the pair kept in the id map. A pair whose upstream id is already stored drops the local record
   * instead (the upstream's copy is kept).
   */
  rekey?: IdPair[];
  outbox?: { put?: OutboxEntry[]; remove?: number[] };
  /** Empties the id map first (the upstream was wiped: its ids mean nothing now). */
  clearIdMap?: boolean;
  /** Meta values to set (undefined deletes). */
  meta?: Record<string, unknown>;
}

/**
 * The records a write creates, as it queues a request's operation with them (see
 * `Storage.queueing`). A write not listed creates nothing.
 *
 * - `putApplication`: the application; `putSession`: the session; `putAnnotation`: the annotation.
 * - `createConversation`: the conversation, then its messages in order.
 * - `editConversation`: the messages the edit puts that the conversation did not have.
 * - `createAsset`, `putAssets`: each asset, then its formats, annotations, tags and websites, each
 *   in its order (a tag or website of the same text or URL as a stored one is that one: the id
 *   given here is then never stored, and pairing it with the upstream's changes nothing).
 * - `editAsset`: the annotations the edit puts that the asset did not have.
 * - `editAnchor`: the anchor, when there was none.
 * - `editMaterials`: the records it puts that were not stored, in put order.
 * - `editLinked`: the tag (website), when there was none.
 * - `editActivity`: the activity, when there was none.
 */
export interface Storage {
  /**
   * This storage as one request's writes see it: its first write of records (a `QueueingWrite`)
   * that writes something appends `scope`'s operation to the outbox in its own transaction, with
   * what it creates; a write that finds nothing to change (an unknown id) leaves it to the next.
   */
  queueing(scope: OutboxScope): Storage;

  listApplications(): Promise<Array<{ application: ApplicationRecord; engagement: Engagement }>>;
  getApplication(id: string): Promise<{ application: ApplicationRecord; engagement: Engagement } | undefined>;
  hasApplication(id: string): Promise<boolean>;
  putApplication(application: ApplicationRecord): Promise<Change[]>;

  /** Stores an event and upserts the applications it carries, in one transaction. */
  recordEvent(event: EventRecord, upsert?: ApplicationRecord[]): Promise<Change[]>;

  putSession(session: SessionRecord): Promise<void>;
  getSession(id: string): Promise<{ session: SessionRecord; engagement: Engagement } | undefined>;
  /** Sets `closed` unless already set; returns the stored session, or undefined if unknown (nothing queued then). */
  closeSession(id: string, closed: { value: string }): Promise<SessionRecord | undefined>;

  /**
   * Stores a new conversation, its messages, the anchors it was created with and the activity
   * that records its creation, in one transaction; the conversation's change comes first.
   */
  createConversation(
    conversation: Omit<ConversationRecord, 'seq'>,
    messages: MessageRecord[],
    anchors?: AnchorRecord[],
    activity?: ActivityRecord,
  ): Promise<Change[]>;
  /**
   * Deletes a conversation and its messages (its anchors stay, no longer listing it);
   * undefined when there is no such conversation (nothing queued then).
   */
  deleteConversation(id: string): Promise<Change[] | undefined>;
  /**
   * Reads a conversation and writes what `edit` makes of it, in one transaction
   * (concurrent edits never lose each other's messages). `edit` may throw to
   * change nothing. Undefined when the conversation (or message) is unknown.
   */
  editConversation(
    target: ConversationTarget,
    edit: (current: ConversationState) => ConversationEdit,
  ): Promise<{ state: ConversationState; changes: Change[] } | undefined>;
  getConversation(id: string): Promise<ConversationState | undefined>;
  getMessage(id: string): Promise<MessageRecord | undefined>;
  listConversations(options: { messages: boolean }): Promise<ConversationList>;
  /**
   * The body of a Conversations snapshot (`{"iterable":[…]}`, conversations in snapshot order), from
   * segments kept ready to send; ranges changed since they were kept are encoded afresh with `encode`
   * (a conversation's wire JSON, with its messages when `withMessages`) and kept for the next read.
   */
  conversationsSnapshot(
    withMessages: boolean,
    encode: (record: ConversationRecord, messages?: Map<string, MessageRecord>) => string,
  ): Promise<Blob | string>;
  /** The ids of a collection in its snapshot order (none for a collection nothing stores), and the last change folded into them. */
  listIds(collection: Collection): Promise<{ ids: string[]; seq: number }>;
  /** How many tags and websites are stored (kinds kept in stores of their own, with no list of ids). */
  countRecords(): Promise<{ tags: number; websites: number }>;
  /**
   * Changes after `seq` (of one collection, or all), oldest first; `seq` is the last change
   * looked at; `complete` is false if the log no longer reaches back that far.
   */
  changesSince(seq: number, collection?: Logged): Promise<{ changes: Change[]; complete: boolean; seq: number }>;

  getAnchor(id: string): Promise<AnchorRecord | undefined>;
  /** Every anchor, in creation order. */
  listAnchors(): Promise<AnchorRecord[]>;
  /**
   * Reads an anchor (undefined if there is none) and the conversations and assets `linked`
   * names for it, and writes what `edit` makes of them, in one transaction (each record written
   * logs its change). `edit` may throw, or return undefined (nothing to change: no change is
   * logged, nothing queued), to change nothing; it gets only the records that exist.
   */
  editAnchor(
    id: string,
    linked: (current: AnchorRecord | undefined) => AnchorLinks,
    edit: (current: AnchorRecord | undefined, found: AnchorLinked) => AnchorEdit | undefined,
  ): Promise<Change[]>;

  getMaterial(kind: GenericKind, id: string): Promise<MaterialRecord | undefined>;
  /** Every material of a kind, in creation order. */
  listMaterials(kind: GenericKind): Promise<MaterialRecord[]>;
  /**
   * One transaction: reads the records `keys` names (those that exist), then those `more(found)`
   * names (e.g. a delete reads the record, then every record its references list), and writes what
   * `edit(found)` returns: `put` (whole records; a new one gets `seq` = its change's seq, a stored
   * one keeps its own), `delete` (keys). Each record written or deleted logs one change of its kind.
   * `edit` may throw (nothing changes) or return undefined (nothing to change: nothing logged,
   * nothing queued). `found` maps `${kind}/${id}` (materialKey) to the records read.
   */
  editMaterials(
    keys: ReadonlyArray<MaterialKey>,
    edit: (found: Map<string, MaterialRecord>) => MaterialEdit | undefined,
    more?: (found: Map<string, MaterialRecord>) => ReadonlyArray<MaterialKey>,
  ): Promise<{ found: Map<string, MaterialRecord>; changes: Change[] }>;

  /**
   * One transaction over every store a side of an association is kept in: reads the records `keys`
   * names (those that exist, of any kind), writes what `edit(found)` returns (see LinkEdit), each
   * record written logging one change of its kind. `edit` may throw (nothing changes) or return
   * undefined (nothing logged, nothing queued). `found` maps `${kind}/${id}` to the records read.
   */
  editLinks(
    keys: ReadonlyArray<LinkKey>,
    edit: (found: Map<string, LinkedRecord>) => LinkEdit | undefined,
  ): Promise<{ found: Map<string, LinkedRecord>; changes: Change[] }>;

  /** The models' local state (catalogue models whose state was changed, custom models). */
  listModelStates(): Promise<ModelStateRecord[]>;
  /**
   * Edits the models' local state in one transaction: `edit` gets every record (by id) and returns
   * those to write, a record undefined to remove it; it may throw (nothing changes). A change is
   * logged per id written, `deleted` when a custom model's record is removed.
   */
  editModelStates(
    edit: (states: ReadonlyMap<string, ModelStateRecord>) => ReadonlyArray<{ id: string; record?: ModelStateRecord }>,
  ): Promise<Change[]>;

  /** Records whether the local user signed in or out (undefined: as configured) and logs a `user` change. */
  setSignedIn(signedIn: boolean | undefined): Promise<Change[]>;

  getAsset(id: string): Promise<StoredAsset | undefined>;
  /** The asset a format or an annotation belongs to (or by its own id). */
  findAsset(target: AssetTarget): Promise<StoredAsset | undefined>;
  /** Every asset, by name. */
  listAssets(): Promise<StoredAsset[]>;
  /**
   * Writes assets whole, with their activities, in one transaction: an asset with a stored id
   * replaces it (its formats and annotations not given again go, and so does its place on tags
   * and websites not given again).
   */
  putAssets(assets: NewAsset[], activities?: ActivityRecord[]): Promise<Change[]>;
  /**
   * Stores a new asset (an id not stored) with its activities. Creates that arrive while one is
   * being written are written together in the next transaction (group commit); each is answered
   * once that commit is done, and one that fails the group fails alone.
   */
  createAsset(asset: NewAsset, activities: ActivityRecord[]): Promise<Change[]>;
  /**
   * Reads an asset and writes what `edit` makes of it, in one transaction; `edit` may throw to
   * change nothing. Undefined when the target is unknown.
   */
  editAsset(target: AssetTarget, edit: (current: StoredAsset) => AssetEdit): Promise<{ state: StoredAsset; changes: Change[] } | undefined>;
  /**
   * Deletes an asset, its formats and annotations, and its place on tags, websites and anchors, in
   * one transaction; undefined when unknown (nothing queued then).
   */
  deleteAsset(id: string, activities?: ActivityRecord[]): Promise<Change[] | undefined>;

  getAnnotation(id: string): Promise<AnnotationRecord | undefined>;
  /** Every annotation, oldest first. */
  listAnnotations(): Promise<AnnotationRecord[]>;
  /** Stores an annotation that belongs to no asset. */
  putAnnotation(annotation: AnnotationRecord): Promise<Change[]>;
  /** Deletes an annotation that belongs to no asset, with its changes; undefined when there is none (nothing queued then). */
  deleteAnnotation(id: string): Promise<Change[] | undefined>;
  getTag(id: string): Promise<TagRecord | undefined>;
  getWebsite(id: string): Promise<WebsiteRecord | undefined>;
  /** Every tag (website), in creation order. */
  listLinked<K extends LinkedKind>(kind: K): Promise<Array<LinkedRecords[K]>>;
  /** The tag of this text (the website of this URL), if there is one. */
  findLinked<K extends LinkedKind>(kind: K, key: string): Promise<LinkedRecords[K] | undefined>;
  /**
   * Reads a tag or website (undefined if there is none) and the assets it lists and `target`
   * names (those that exist), and writes what `edit` makes of them, in one transaction: the
   * record's change (a delete marked) and each asset's are logged. `edit` may throw, or return
   * undefined (nothing logged, nothing queued), to change nothing.
   */
  editLinked<K extends LinkedKind>(
    kind: K,
    target: LinkedTarget,
    edit: (current: LinkedRecords[K] | undefined, assets: Map<string, AssetRecord>) => LinkedEdit<K> | undefined,
  ): Promise<Change[]>;
  /** Every activity, oldest first. */
  listActivities(): Promise<ActivityRecord[]>;
  /** Records activities (of conversations deleted: written after the conversation's own transaction). */
  recordActivities(activities: ActivityRecord[]): Promise<Change[]>;
  /**
   * Reads an activity (undefined if there is none) and writes what `edit` makes of it in one
   * transaction: a record (created or replaced), null (deleted), or undefined (nothing to change:
   * nothing logged, nothing queued); `edit` may throw to change nothing.
   */
  editActivity(id: string, edit: (current: ActivityRecord | undefined) => ActivityRecord | null | undefined): Promise<Change[]>;

  listExternalApplications(): Promise<ExternalApplicationRecord[]>;
  putExternalApplications(applications: ExternalApplicationRecord[]): Promise<void>;

  /** Every stored record, in one transaction. */
  dumpData(): Promise<StoredData>;
  /**
   * Writes the records in one transaction (a record with an existing id replaces it, a
   * conversation together with its messages). With `replace`, every other record is
   * removed first (and the outbox and id map emptied: nothing queued is left to replay; the
   * sign-in state and the OS settings are the configured ones again).
   * Returns the conversation changes made, in commit order.
   */
  loadData(data: StoredData, options: { replace: boolean }): Promise<Change[]>;

  /** Every outbox entry (queued, sent, set aside), in order; with `after`, those queued after that one. */
  outboxEntries(after?: number): Promise<OutboxEntry[]>;
  /** The id map: records created locally and the ids the upstream gave them. */
  idPairs(): Promise<IdPair[]>;
  /** Writes what the mirror learnt, in one transaction (see MirrorBatch); the changes logged, in order. */
  applyMirror(batch: MirrorBatch): Promise<Change[]>;

  /**
   * The database's identity: a random id made on its first start. A wiped and
   * recreated database has a new one (its change sequence starts again).
   */
  identity(): Promise<string>;

  /** A search index kept for a cold start (see schema `search`). */
  getSearchIndex(name: string): Promise<{ seq: number; value: unknown } | undefined>;
  putSearchIndex(name: string, index: { seq: number; value: unknown }): Promise<void>;

  getMeta<T>(key: string): Promise<T | undefined>;
  /** Stores a value under `key` (undefined deletes it). */
  setMeta(key: string, value: unknown): Promise<void>;
  /** Returns the value stored under `key`, storing `create()` first if there is none. */
  ensureMeta<T>(key: string, create: () => T): Promise<T>;
  /** Stores what `update` makes of the value under `key`, read and written in one transaction; returns it. */
  updateMeta<T>(key: string, update: (current: T | undefined) => T): Promise<T>;
  /**
   * As updateMeta, and logs a change of `logged` (id `key`) in the same transaction, for the
   * socket that carries the value (the OS settings); nothing is written or logged when `update` throws.
   */
  updateLoggedMeta<T>(key: string, update: (current: T | undefined) => T, logged: Logged): Promise<{ value: T; changes: Change[] }>;

  close(): void;
}

export type { Collection, CreatedId, GenericKind, IdPair, Logged, MaterialRecord, OutboxEntry, RecordKind };
export type { ActivityRecord, AnchorRecord, AnnotationRecord, AssetRecord, FormatRecord, ModelStateRecord, TagRecord, WebsiteRecord };
