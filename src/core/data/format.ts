/** The types of the data format: what `exportData()` gives and what `seed(data)` takes. */
import type { AssetInput } from '../models/asset.js';
import type { CONVERSATION_FIELDS, MESSAGE_FIELDS } from '../models/conversation-fields.js';
import type {
  ActivityRecord,
  AnnotationRecord,
  AssetRecord,
  EventRecord,
  ExternalApplicationRecord,
  FormatRecord,
  GenericKind,
  ModelStateRecord,
  SessionRecord,
  TagRecord,
  WebsiteRecord,
} from '../../storage/schema.js';
import type { JsonObject } from '../validate.js';

/**
 * The format's version: every document of an earlier version must still load, so it changes only
 * when a key's meaning does; a new optional section (as `anchors`, `models`, `materials`) leaves it.
 */
export const DATA_VERSION = 1;

/** A conversation with its messages inline, as exported (every id and time set). */
export type ConversationData = SeedConversation & {
  id: string;
  type: string;
  created: GroupedTimestamp;
  updated: GroupedTimestamp;
  messages: Array<SeedMessage & { id: string; created: GroupedTimestamp; updated: GroupedTimestamp }>;
};

export interface PiecesData {
  version: typeof DATA_VERSION;
  conversations: ConversationData[];
  applications: Array<JsonObject & { id: string; name: string; version: string; platform: string }>;
  sessions: SessionRecord[];
  events: EventRecord[];
  assets: AssetData[];
  annotations: AnnotationRecord[];
  tags: TagRecord[];
  websites: WebsiteRecord[];
  activities: ActivityRecord[];
  externalApplications: ExternalApplicationRecord[];
  /** Anchors as `GET /anchor/{id}` answers them. */
  anchors: Array<Record<string, unknown> & { id: string; type: string; points: { iterable: unknown[] } }>;
  /** The catalogue models downloaded here. */
  models: ModelStateRecord[];
  /** The materials of the generic path's kinds: per kind (that has any), its records' wire JSON in creation order. */
  materials: MaterialsData;
}

/** A material as exported: its wire JSON (the SDK's model of its kind: `Person`, …, references as Flattened lists). */
export type MaterialData = Record<string, unknown> & { id: string; created: GroupedTimestamp; updated: GroupedTimestamp };

/** Materials by kind (the kind's key in the SDK's StreamedIdentifier: `person`, `workstreamSummary`). */
export type MaterialsData = { [K in GenericKind]?: MaterialData[] };

/** A format as exported: bytes (a value that is not text) in base64. */
export type FormatData = Omit<FormatRecord, 'asset' | 'bytes'> & { bytes?: string };

/** An asset as exported: its record, its formats and its annotations. */
export type AssetData = Omit<AssetRecord, 'formats'> & { formats: FormatData[]; annotations: AnnotationRecord[] };

/** A time as the wire writes it: `{ value: '<ISO-8601>' }`. */
export interface GroupedTimestamp {
  value: string;
  readable?: string;
}

type ConversationField = (typeof CONVERSATION_FIELDS)[number];
type MessageField = (typeof MESSAGE_FIELDS)[number];

/** A message to seed: a ConversationMessage's fields; `role` and `fragment` required, id and times optional. */
export type SeedMessage = { [K in Exclude<MessageField, 'role' | 'fragment' | 'id' | 'created' | 'updated' | 'sentiment'>]?: unknown } & {
  id?: string;
  /** `USER`, `ASSISTANT`, `SYSTEM` or `UNKNOWN`. */
  role: string;
  fragment: { string?: { raw?: string } } & Record<string, unknown>;
  /** `LIKE`, `DISLIKE`, `REPORT` or `UNKNOWN`. */
  sentiment?: string;
  created?: GroupedTimestamp;
  updated?: GroupedTimestamp;
};

/** A conversation to seed: a Conversation's fields, its messages inline, id and times optional. */
export type SeedConversation = {
  [K in Exclude<ConversationField, 'id' | 'name' | 'type' | 'created' | 'updated' | 'messages'>]?: unknown;
} & {
  id?: string;
  name?: string;
  /** `COPILOT` (the default) or `UNKNOWN`. */
  type?: string;
  created?: GroupedTimestamp;
  updated?: GroupedTimestamp;
  messages?: SeedMessage[];
  /** Ids of messages deleted from the conversation (listed as -1 in its `indices`). */
  deletedMessages?: string[];
};

/** What `seed` accepts: any part of the format, ids and times optional. */
export interface PiecesSeed {
  version?: typeof DATA_VERSION;
  conversations?: SeedConversation[];
  /** Applications, as the SDK's Application model (every field it has, and no other). */
  applications?: Array<Record<string, unknown> & { id?: string; name: string; version: string; platform: string }>;
  sessions?: Array<Omit<SessionRecord, 'id' | 'opened'> & { id?: string; opened?: GroupedTimestamp }>;
  events?: Array<Omit<EventRecord, 'id' | 'at'> & { id?: string; at?: string }>;
  /** Assets in short (AssetInput, as `addAssets` takes) or whole (as exported). */
  assets?: Array<AssetInput | AssetData>;
  annotations?: AnnotationRecord[];
  tags?: TagRecord[];
  websites?: WebsiteRecord[];
  activities?: ActivityRecord[];
  externalApplications?: ExternalApplicationRecord[];
  /** Anchors (the SDK's Anchor, with its `points`); id and times optional. */
  anchors?: Array<Record<string, unknown> & { type: string; points: { iterable: unknown[] } }>;
  /** Catalogue models' local state: `{ id, downloaded: true }` for a model downloaded here. */
  models?: Array<{ id: string; downloaded: boolean }>;
  /** Materials by kind, each kind's in creation order; id and times optional. */
  materials?: {
    [K in GenericKind]?: Array<Record<string, unknown> & { id?: string; created?: GroupedTimestamp; updated?: GroupedTimestamp }>;
  };
}
