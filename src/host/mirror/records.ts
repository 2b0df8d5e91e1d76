/**
 * The upstream's records as this service stores them: a wire Conversation (read with
 * `transferables=true`, its messages' references inline), an Application, an Asset whole (its
 * formats with their values, annotations, tags and websites), an Anchor, an Activity, an
 * Annotation. Ids are kept, and every field this service stores is taken as the upstream sent
 * it, so that the service's own wire form of the stored record is the upstream's (for the
 * fields the service models). The upstream is trusted as a Pieces OS is: its JSON is kept as it
 * sent it (nulls dropped, as the service stores JSON), not validated as a client's body is.
 */
import { conversationMessageIds } from './writes.js';
import { storedJson } from '../../core/validate.js';
import type {
  GenericKind,
  MaterialRecord,
  ActivityRecord,
  AnchorRecord,
  AnnotationRecord,
  ApplicationRecord,
  FormatRecord,
  MessageRecord,
  TagRecord,
  WebsiteRecord,
} from '../../storage/schema.js';
import type { StoredAsset, StoredData } from '../../storage/storage.js';

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
/** A wire record's id. */
export const idOf = (value: unknown) => (isRecord(value) && typeof value.id === 'string' ? value.id : undefined);
/** Every id a wire record gives: its own, and those of the records it lists (and of what they list). */
export const idsIn = (value: unknown): string[] =>
  Array.isArray(value)
    ? value.flatMap(idsIn)
    : isRecord(value)
      ? [...(typeof value.id === 'string' ? [value.id] : []), ...Object.values(value).flatMap(idsIn)]
      : [];

export type StoredConversation = StoredData['conversations'][number];

/** A wire Conversation as a stored conversation and its messages; undefined when it is not one. */
export function conversationRecord(wire: unknown): StoredConversation | undefined {
  const id = idOf(wire);
  if (!id || !isRecord(wire)) return undefined;
  const { messages: listed, ...rest } = wire;
  const items = isRecord(listed) && Array.isArray(listed.iterable) ? (listed.iterable as unknown[]) : [];
  const indices = isRecord(listed) && isRecord(listed.indices) ? (listed.indices as Record<string, number>) : {};
  const references = new Map(items.filter(isRecord).map((item) => [item.id, item.reference]));
  const messageIds = conversationMessageIds(wire);
  const messages: MessageRecord[] = [];
  for (const messageId of messageIds) {
    const reference = references.get(messageId);
    if (isRecord(reference))
      messages.push({ id: messageId, conversation: id, json: storedJson({ ...reference, id: messageId, conversation: { id } }) });
  }
  const deletedMessageIds = Object.keys(indices).filter((key) => indices[key] === -1);
  return {
    conversation: {
      id,
      json: storedJson(rest),
      messageIds: messages.map((m) => m.id),
      ...(deletedMessageIds.length ? { deletedMessageIds } : {}),
    },
    messages,
  };
}

/** Whether a wire Conversation lists its messages with their references (read with `transferables=true`). */
export function conversationMessagesListed(wire: unknown): boolean {
  const listed =
    isRecord(wire) && isRecord(wire.messages) && Array.isArray(wire.messages.iterable) ? (wire.messages.iterable as unknown[]) : [];
  return listed.every((item) => isRecord(item) && isRecord(item.reference));
}

/** A wire Application as stored (the engagement figures this service derives are not part of it). */
export function applicationRecord(wire: unknown): ApplicationRecord | undefined {
  const id = idOf(wire);
  if (!id || !isRecord(wire)) return undefined;
  const { engagement: _engagement, ...application } = wire;
  return JSON.parse(storedJson(application)) as ApplicationRecord;
}

const time = (value: unknown, fallback = new Date(0).toISOString()) =>
  isRecord(value) && typeof value.value === 'string' ? value.value : fallback;
const listed = (value: unknown): unknown[] => (isRecord(value) && Array.isArray(value.iterable) ? value.iterable : []);
const ids = (value: unknown) =>
  listed(value)
    .map(idOf)
    .filter((id): id is string => id !== undefined);
/** JSON as the service stores it: nulls dropped. */
const stored = <T>(value: unknown): T => JSON.parse(storedJson(value)) as T;

/** A Format's (or FlattenedFormat's) value: a fragment's or a file's string or bytes. */
function formatValue(format: Json): Pick<FormatRecord, 'kind' | 'text' | 'bytes'> | undefined {
  for (const kind of ['fragment', 'file'] as const) {
    const part = format[kind];
    if (!isRecord(part)) continue;
    if (isRecord(part.string) && typeof part.string.raw === 'string') return { kind, text: part.string.raw };
    if (isRecord(part.bytes) && Array.isArray(part.bytes.raw)) return { kind, bytes: Uint8Array.from(part.bytes.raw as number[]) };
  }
  return undefined;
}

/** A wire Format (or the FlattenedFormat of a reference) of the asset `asset`, as stored. */
function formatRecord(wire: unknown, asset: string): FormatRecord | undefined {
  const id = idOf(wire);
  if (!id || !isRecord(wire)) return undefined;
  const value = formatValue(wire) ?? { kind: 'fragment' as const, text: '' };
  const classification = isRecord(wire.classification) ? wire.classification : {};
  const application = isRecord(wire.application)
    ? stored<FormatRecord['application']>(wire.application)
    : { id: typeof wire.creator === 'string' ? wire.creator : '' };
  const size =
    isRecord(wire.bytes) && typeof wire.bytes.value === 'number'
      ? wire.bytes.value
      : value.text !== undefined
        ? new TextEncoder().encode(value.text).byteLength
        : value.bytes!.byteLength;
  return {
    id,
    asset,
    role: typeof wire.role === 'string' ? wire.role : 'BOTH',
    classification: {
      generic: typeof classification.generic === 'string' ? classification.generic : 'CODE',
      specific: typeof classification.specific === 'string' ? classification.specific : 'txt',
      ...(typeof classification.rendering === 'string' ? { rendering: classification.rendering } : {}),
    },
    application,
    created: time(wire.created),
    updated: time(wire.updated),
    ...value,
    size,
  };
}

/** A wire Annotation as stored (its asset a reference `{id}`). */
export function annotationRecord(wire: unknown): AnnotationRecord | undefined {
  const id = idOf(wire);
  if (!id || !isRecord(wire) || typeof wire.type !== 'string' || typeof wire.text !== 'string') return undefined;
  const asset = idOf(wire.asset);
  const { asset: _asset, ...rest } = wire;
  return stored<AnnotationRecord>({ ...rest, ...(asset ? { asset: { id: asset } } : {}) });
}

/** A wire Tag as stored, on the assets it lists (and `asset`, the one it came with). */
function tagRecord(wire: unknown, asset: string): TagRecord | undefined {
  const id = idOf(wire);
  if (!id || !isRecord(wire) || typeof wire.text !== 'string') return undefined;
  return {
    id,
    text: wire.text,
    category: typeof wire.category === 'string' ? wire.category : 'UNKNOWN',
    created: time(wire.created),
    updated: time(wire.updated),
    assets: [...new Set([...ids(wire.assets), asset])],
  };
}

/** A wire Website as stored, on the assets it lists (and `asset`, the one it came with). */
function websiteRecord(wire: unknown, asset: string): WebsiteRecord | undefined {
  const id = idOf(wire);
  if (!id || !isRecord(wire) || typeof wire.url !== 'string') return undefined;
  return {
    id,
    url: wire.url,
    name: typeof wire.name === 'string' ? wire.name : wire.url,
    created: time(wire.created),
    updated: time(wire.updated),
    assets: [...new Set([...ids(wire.assets), asset])],
  };
}

const some = <T>(items: Array<T | undefined>): T[] => items.filter((item): item is T => item !== undefined);

/**
 * A wire Asset (read with `transferables=true`) as stored whole: the asset record, its formats
 * (in its order, with their values; a format listed only as its original or preview reference
 * is taken from there), its annotations, tags and websites.
 */
export function assetRecord(wire: unknown): StoredAsset | undefined {
  const id = idOf(wire);
  if (!id || !isRecord(wire)) return undefined;
  const original = isRecord(wire.original) ? wire.original : {};
  const preview = isRecord(wire.preview) && isRecord(wire.preview.base) ? wire.preview.base : {};
  const formats = some(listed(wire.formats).map((format) => formatRecord(format, id)));
  for (const reference of [original, preview]) {
    const format = isRecord(reference.reference) ? formatRecord(reference.reference, id) : undefined;
    if (format && !formats.some((f) => f.id === format.id)) formats.push(format);
  }
  const created = time(wire.created);
  // The anchors it lists, by id (each is a record of its own, read from the anchors).
  const anchors = some(listed(wire.anchors).map(idOf));
  const flags: Partial<Record<'favorited' | 'discovered' | 'pseudo' | 'demo', boolean>> = {};
  for (const key of ['favorited', 'discovered', 'pseudo', 'demo'] as const)
    if (typeof wire[key] === 'boolean') flags[key] = wire[key] as boolean;
  return {
    record: {
      id,
      name: typeof wire.name === 'string' ? wire.name : '',
      created,
      updated: time(wire.updated, created),
      creator: typeof wire.creator === 'string' ? wire.creator : '',
      mechanism: typeof wire.mechanism === 'string' ? wire.mechanism : 'MANUAL',
      formats: formats.map((f) => f.id),
      original: idOf(original) ?? formats[0]?.id ?? '',
      preview: idOf(preview) ?? idOf(original) ?? formats[0]?.id ?? '',
      ...flags,
      ...(isRecord(wire.score) && typeof wire.score.manual === 'number' && typeof wire.score.automatic === 'number'
        ? { score: wire.score as NonNullable<StoredAsset['record']['score']> }
        : {}),
      ...(anchors.length ? { anchors } : {}),
    },
    formats,
    annotations: some(listed(wire.annotations).map(annotationRecord)).map((a) => ({ ...a, asset: { id } })),
    tags: some(listed(wire.tags).map((tag) => tagRecord(tag, id))),
    websites: some(listed(wire.websites).map((site) => websiteRecord(site, id))),
  };
}

/** Whether a wire Asset lists its formats with their values (read with `transferables=true`). */
export function assetValuesListed(wire: unknown): boolean {
  const formats = isRecord(wire) ? listed(wire.formats) : [];
  return formats.length > 0 && formats.every((format) => isRecord(format) && formatValue(format) !== undefined);
}

/** The conversations a stored anchor lists. */
export function anchorConversationIds(anchor: AnchorRecord | undefined): string[] {
  if (!anchor) return [];
  return ids((JSON.parse(anchor.json) as Json).conversations);
}

/** A wire Anchor as stored (its creation time the snapshot order). */
export function anchorRecord(wire: unknown): AnchorRecord | undefined {
  const id = idOf(wire);
  if (!id || !isRecord(wire)) return undefined;
  return { id, created: `${time(wire.created)}#${id}`, json: storedJson(wire) };
}

/** A wire Activity as stored (its asset by id: the asset is joined when it is read). */
export function activityRecord(wire: unknown): ActivityRecord | undefined {
  const id = idOf(wire);
  if (!id || !isRecord(wire) || !isRecord(wire.event)) return undefined;
  const created = time(wire.created);
  const asset = idOf(wire.asset);
  return {
    id,
    created,
    order: `${created}|${id}`,
    event: stored<ActivityRecord['event']>(wire.event),
    application:
      isRecord(wire.application) && idOf(wire.application)
        ? stored<ActivityRecord['application']>(wire.application)
        : { ...UNKNOWN_APPLICATION },
    mechanism: typeof wire.mechanism === 'string' ? wire.mechanism : 'MANUAL',
    ...(asset ? { asset } : {}),
  };
}

/** An Activity's application when the upstream gave none (the SDK requires one). */
const UNKNOWN_APPLICATION = { id: '', name: 'UNKNOWN', version: '', platform: 'UNKNOWN', onboarded: false, privacy: 'OPEN' };

/** The items of a list answer that convert. */
export function records<T>(answer: unknown, convert: (wire: unknown) => T | undefined): T[] {
  const items = isRecord(answer) && Array.isArray(answer.iterable) ? answer.iterable : [];
  return items.map(convert).filter((record): record is T => record !== undefined);
}

/** A wire material of a generic kind (its kind's model in the graph table) as stored: its JSON as the upstream sent it, nulls dropped. */
export function materialRecord(kind: GenericKind, wire: unknown): Omit<MaterialRecord, 'seq'> | undefined {
  const id = idOf(wire);
  if (!id || !isRecord(wire)) return undefined;
  return { kind, id, value: stored<MaterialRecord['value']>(wire) };
}
