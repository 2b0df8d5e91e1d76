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
  ChangeRecord,
  Collection,
  ConversationRecord,
  EventRecord,
  ExternalApplicationRecord,
  FormatRecord,
  Logged,
  MessageRecord,
  ModelStateRecord,
  SessionRecord,
  TagRecord,
  WebsiteRecord,
} from './schema.js';

/** The meta key of the local user's signed-in state (see setSignedIn). */
export const SIGNED_IN_KEY = 'signedIn';

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
}

/**
 * What an edit of an anchor writes: the anchor (null: delete it), and the
 * conversations whose anchors change with it (their whole new records).
 */
export interface AnchorEdit {
  anchor: AnchorRecord | null;
  conversations?: Array<Omit<ConversationRecord, 'seq'>>;
}

export interface Storage {
  listApplications(): Promise<Array<{ application: ApplicationRecord; engagement: Engagement }>>;
  getApplication(id: string): Promise<{ application: ApplicationRecord; engagement: Engagement } | undefined>;
  hasApplication(id: string): Promise<boolean>;
  putApplication(application: ApplicationRecord): Promise<Change[]>;

  /** Stores an event and upserts the applications it carries, in one transaction. */
  recordEvent(event: EventRecord, upsert?: ApplicationRecord[]): Promise<Change[]>;

  putSession(session: SessionRecord): Promise<void>;
  getSession(id: string): Promise<{ session: SessionRecord; engagement: Engagement } | undefined>;
  /** Sets `closed` unless already set; returns the stored session, or undefined if unknown. */
  closeSession(id: string, closed: { value: string }): Promise<SessionRecord | undefined>;

  /**
   * Stores a new conversation, its messages, the anchors it was created with and the activity
   * that records its creation, in one transaction; the conversation's change comes first.
   */
  createConversation(conversation: Omit<ConversationRecord, 'seq'>, messages: MessageRecord[], anchors?: AnchorRecord[], activity?: ActivityRecord): Promise<Change[]>;
  /**
   * Deletes a conversation and its messages (its anchors stay, no longer listing it);
   * undefined when there is no such conversation.
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
  /**
   * Changes after `seq` (of one collection, or all), oldest first; `seq` is the last change
   * looked at; `complete` is false if the log no longer reaches back that far.
   */
  changesSince(seq: number, collection?: Logged): Promise<{ changes: Change[]; complete: boolean; seq: number }>;

  getAnchor(id: string): Promise<AnchorRecord | undefined>;
  /** Every anchor, in creation order. */
  listAnchors(): Promise<AnchorRecord[]>;
  /**
   * Reads an anchor (undefined if there is none) and the conversations `linked` names for it,
   * and writes what `edit` makes of them, in one transaction. `edit` may throw to change
   * nothing; it gets only the conversations that exist.
   */
  editAnchor(
    id: string,
    linked: (current: AnchorRecord | undefined) => string[],
    edit: (current: AnchorRecord | undefined, conversations: Map<string, ConversationRecord>) => AnchorEdit,
  ): Promise<Change[]>;

  /** The catalogue models' local state (only models whose state was changed). */
  listModelStates(): Promise<ModelStateRecord[]>;
  /** Sets a catalogue model's local state (`downloaded: false` removes the record) and logs its change. */
  setModelState(state: ModelStateRecord): Promise<Change[]>;

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
  /** Deletes an asset, its formats and annotations, and its place on tags and websites, in one transaction; undefined when unknown. */
  deleteAsset(id: string, activities?: ActivityRecord[]): Promise<Change[] | undefined>;

  getAnnotation(id: string): Promise<AnnotationRecord | undefined>;
  /** Every annotation, oldest first. */
  listAnnotations(): Promise<AnnotationRecord[]>;
  /** Stores an annotation that belongs to no asset. */
  putAnnotation(annotation: AnnotationRecord): Promise<Change[]>;
  /** Deletes an annotation that belongs to no asset; false when there is none. */
  deleteAnnotation(id: string): Promise<boolean>;
  getTag(id: string): Promise<TagRecord | undefined>;
  getWebsite(id: string): Promise<WebsiteRecord | undefined>;
  /** Every activity, oldest first. */
  listActivities(): Promise<ActivityRecord[]>;
  /** Records activities (of conversations deleted: written after the conversation's own transaction). */
  recordActivities(activities: ActivityRecord[]): Promise<Change[]>;

  listExternalApplications(): Promise<ExternalApplicationRecord[]>;
  putExternalApplications(applications: ExternalApplicationRecord[]): Promise<void>;

  /** Every stored record, in one transaction. */
  dumpData(): Promise<StoredData>;
  /**
   * Writes the records in one transaction (a record with an existing id replaces it, a
   * conversation together with its messages). With `replace`, every other record is
   * removed first. Returns the conversation changes made, in commit order.
   */
  loadData(data: StoredData, options: { replace: boolean }): Promise<Change[]>;

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

  close(): void;
}

export type { ChangeRecord, Collection, Logged };
export type { ActivityRecord, AnchorRecord, AnnotationRecord, AssetRecord, FormatRecord, ModelStateRecord, TagRecord, WebsiteRecord };
