/**
 * What is stored: the record of every store (schema.ts says which store holds which, with its
 * indexes), and the records the mirror's outbox and id map keep.
 */
import type { GenericKind } from '../../shared/graph.js';
import type { JsonObject } from '../../shared/json.js';

export type { GenericKind };

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
  /** Its Score (AssetApi's assetScoresIncrement), once a count went up. */
  score?: { manual: number; automatic: number } & Partial<Record<'priority' | 'reuse' | 'update' | 'reference' | 'searched', number>>;
  /** The anchors associated with it, in the order they were associated (each anchor lists it in its `assets`). */
  anchors?: string[];
  /** Its other associations (src/storage/idb/links.ts): by the Asset's wire field ('persons'), the ids it lists, in order. */
  links?: Record<string, string[]>;
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
  /** The wire Tag's other fields as last given (its score, interactions, …; no references). */
  fields?: JsonObject;
  /** Its other associations (src/storage/idb/links.ts): by the Tag's wire field ('persons'), the ids it lists, in order. */
  links?: Record<string, string[]>;
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
  /** The wire Website's other fields as last given (its score, interactions, …; no references). */
  fields?: JsonObject;
  /** Its other associations (src/storage/idb/links.ts): by the Website's wire field ('persons'), the ids it lists, in order. */
  links?: Record<string, string[]>;
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

/**
 * A material of a kind with no hand-written store (the generic path: see src/shared/graph.ts), keyed
 * by `[kind, id]` and listed by `[kind, seq]`.
 */
export interface MaterialRecord {
  kind: GenericKind;
  id: string;
  /** The change-sequence number of its creation: list order (oldest first). */
  seq: number;
  /** Its wire JSON: the SDK model (`Person`, …), references as the SDK writes them (Flattened lists). */
  value: JsonObject & { id: string };
}

/**
 * A model's local state, where it differs from the catalogue's: a download done, loaded, scored,
 * its fields as an update left them; or a custom model (created by a client), whose fields are
 * all here (`model.custom`).
 */
export interface ModelStateRecord {
  id: string;
  downloaded: boolean;
  loaded?: boolean;
  /** The model's wire fields (a Model without its state: downloaded, downloading, loaded, score), where they are not the catalogue's. */
  model?: JsonObject;
  /** Its Score, once incremented. */
  score?: JsonObject;
}

/**
 * What a queued operation's ids name: the collections with an identifier stream, sessions, and
 * what hangs on an asset (ids the upstream assigns and later operations name).
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

/**
 * The collections with an identifier stream; the names are StreamedIdentifier's keys (the kinds the
 * generic material store keeps among them).
 */
export type Collection =
  | 'conversation'
  | 'conversationMessage'
  | 'asset'
  | 'application'
  | 'activity'
  | 'anchor'
  | 'range'
  | 'model'
  | 'tag'
  | 'website'
  | 'format'
  | 'annotation'
  | GenericKind;

/**
 * What the change log records changes of: the collections, the local user's
 * profile (`user`, id `local`: signed in or out), whose socket sends the profile again,
 * the OS's settings (`osSettings`, id its meta key), whose socket sends them again, and the
 * vision processor's status (`vision`, id its meta key), whose socket sends it again.
 */
export type Logged = Collection | 'user' | 'osSettings' | 'vision';

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
