/** SeededAnchor and SeededAnnotation into whole records, and an anchor as stored and as listed by another record. */
import { AnchorTypeEnum, AnnotationTypeEnum, MechanismEnum, PlatformEnum } from '../enums.js';
import type { Clock } from '../clock.js';
import type { AnchorRecord } from '../../storage/schema.js';
import { withList } from '../../storage/anchor-links.js';
import {
  array,
  boolean,
  knownKeys,
  object,
  oneOf,
  optional,
  required,
  storedJson,
  string,
  type Json,
  type JsonObject,
} from '../validate.js';
import { FIELDS } from './conversation-fields.js';

/** Whole records as a Flattened* list: `{ iterable: [{ id, reference }] }`. */
export const references = (items: JsonObject[]) => ({ iterable: items.map((reference) => ({ id: reference.id!, reference })) });

/** Keys of a SeededAnnotation that name another record by id; on the wire they are references `{id}`. */
const ANNOTATION_LINKS: Array<[seeded: string, wire: string]> = [
  ['asset', 'asset'],
  ['person', 'person'],
  ['model', 'model'],
  ['anchor', 'anchor'],
  ['workstreamSummary', 'summary'],
  ['conversation', 'conversation'],
];

/** A SeededAnnotation becomes a FlattenedAnnotation (links as references). */
export function seedAnnotation(item: Json, path: string, clock: Clock, owner: JsonObject): JsonObject {
  const seeded = object(item, path);
  knownKeys(seeded, FIELDS.SeededAnnotation, path, 'SeededAnnotation');
  const type = required(seeded, 'type', path, (v, p) => oneOf(v, AnnotationTypeEnum, p));
  const text = required(seeded, 'text', path, string);
  optional(seeded, 'mechanism', path, (v, p) => oneOf(v, MechanismEnum, p));
  const annotation: JsonObject = { ...seeded };
  for (const [from, to] of ANNOTATION_LINKS) {
    const id = optional(seeded, from, path, string);
    delete annotation[from];
    if (id !== undefined) annotation[to] = { id };
  }
  return {
    ...annotation,
    id: clock.newId(),
    type,
    text,
    created: { value: clock.now().toISOString() },
    updated: { value: clock.now().toISOString() },
    ...owner,
  };
}

/** A SeededAnchor becomes a whole Anchor with its one point (listing the conversation it is created with, if any). */
export function seedAnchor(item: Json, path: string, clock: Clock, conversationId?: string): JsonObject {
  const seeded = object(item, path);
  knownKeys(seeded, FIELDS.SeededAnchor, path, 'SeededAnchor');
  const type = required(seeded, 'type', path, (v, p) => oneOf(v, AnchorTypeEnum, p));
  const fullpath = required(seeded, 'fullpath', path, string);
  optional(seeded, 'watch', path, boolean);
  optional(seeded, 'name', path, string);
  const platform = optional(seeded, 'platform', path, (v, p) => oneOf(v, PlatformEnum, p));
  const asset = optional(seeded, 'asset', path, string);
  const annotations = optional(seeded, 'annotations', path, array);
  // `fullpath` and `platform` belong to the anchor's point; `asset` and `annotations` become references.
  const {
    asset: _asset,
    annotations: _annotations,
    conversation: _conversation,
    fullpath: _fullpath,
    platform: _platform,
    ...rest
  } = seeded;
  const id = clock.newId();
  const stamp = { created: { value: clock.now().toISOString() }, updated: { value: clock.now().toISOString() } };
  const point = { id: clock.newId(), fullpath, ...stamp, anchor: { id }, ...(platform ? { platform } : {}) };
  return {
    ...rest,
    id,
    type,
    ...stamp,
    points: { iterable: [{ id: point.id, reference: point }] },
    ...(conversationId ? withList({}, 'conversations', [conversationId]) : {}),
    ...(asset ? withList({}, 'assets', [asset]) : {}),
    ...(annotations
      ? { annotations: references(annotations.map((a, i) => seedAnnotation(a, `${path}.annotations[${i}]`, clock, { anchor: { id } }))) }
      : {}),
  };
}

/**
 * An anchor as a record that lists it holds it (a conversation's `anchors` reference): its own
 * fields, without its associations (`conversations`, `assets`), which change without it and are
 * read from the anchor itself.
 */
export function listedAnchor(anchor: JsonObject): JsonObject {
  const { conversations: _conversations, assets: _assets, ...own } = anchor;
  return own;
}

/** The stored record of a whole Anchor; `position` orders anchors created together (one conversation's). */
export const anchorRecord = (anchor: JsonObject, position = 0): AnchorRecord => ({
  id: anchor.id as string,
  created: `${(anchor.created as { value: string }).value}#${String(position).padStart(5, '0')}`,
  json: storedJson(anchor),
});
