/**
 * The storage interface the service core is written against. Every method is
 * one IndexedDB transaction: a write that touches several records commits or
 * fails as a whole.
 */
import type {
  ApplicationRecord,
  AssetRecord,
  ChangeRecord,
  ConversationRecord,
  EventRecord,
  ExternalApplicationRecord,
  MessageRecord,
  SessionRecord,
} from './schema.js';

/** Engagement derived from stored usage events. */
export interface Engagement {
  interactions: number;
  keyboard: number;
  installations: number;
  updates: number;
  /** Time of the latest event, if any. */
  lastActivity?: { value: string };
}

export interface Change {
  seq: number;
  conversation: string;
  deleted?: true;
}

export interface ConversationList {
  conversations: ConversationRecord[];
  /** Present when messages were asked for: every message of the listed conversations. */
  messages?: Map<string, MessageRecord>;
}

export interface Storage {
  listApplications(): Promise<Array<{ application: ApplicationRecord; engagement: Engagement }>>;
  getApplication(id: string): Promise<{ application: ApplicationRecord; engagement: Engagement } | undefined>;
  hasApplication(id: string): Promise<boolean>;
  putApplication(application: ApplicationRecord): Promise<void>;

  /** Stores an event and upserts the applications it carries, in one transaction. */
  recordEvent(event: EventRecord, upsert?: ApplicationRecord[]): Promise<void>;

  putSession(session: SessionRecord): Promise<void>;
  getSession(id: string): Promise<{ session: SessionRecord; engagement: Engagement } | undefined>;
  /** Sets `closed` unless already set; returns the stored session, or undefined if unknown. */
  closeSession(id: string, closed: { value: string }): Promise<SessionRecord | undefined>;

  createConversation(conversation: Omit<ConversationRecord, 'seq'>, messages: MessageRecord[]): Promise<Change>;
  /** Deletes a conversation and its messages; undefined when there is no such conversation. */
  deleteConversation(id: string): Promise<Change | undefined>;
  listConversations(options: { messages: boolean }): Promise<ConversationList>;
  /** Conversation ids in snapshot order, and the last change folded into them. */
  listConversationIds(): Promise<{ ids: string[]; seq: number }>;
  /** Changes after `seq`, oldest first; `complete` is false if the log no longer reaches back that far. */
  changesSince(seq: number): Promise<{ changes: Change[]; complete: boolean }>;

  getAsset(id: string): Promise<AssetRecord | undefined>;
  listAssetIds(): Promise<string[]>;
  putAssets(assets: AssetRecord[]): Promise<void>;

  listExternalApplications(): Promise<ExternalApplicationRecord[]>;
  putExternalApplications(applications: ExternalApplicationRecord[]): Promise<void>;

  /**
   * The database's identity: a random id made on its first start. A wiped and
   * recreated database has a new one (its change sequence starts again).
   */
  identity(): Promise<string>;

  getMeta<T>(key: string): Promise<T | undefined>;
  /** Returns the value stored under `key`, storing `create()` first if there is none. */
  ensureMeta<T>(key: string, create: () => T): Promise<T>;

  close(): void;
}

export type { ChangeRecord };
