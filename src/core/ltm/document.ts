/**
 * What long-term memory ranks: a workstream summary or a workstream event as a document (its time,
 * title, readable text, application and URL) and the fields the relevance index reads of it.
 */
import type { AnnotationRecord, MaterialRecord } from '../../storage/storage.js';
import { seenIn } from '../models/pattern-engine.js';
import type { Field } from '../relevance.js';
import { isObject, type JsonObject } from '../validate.js';

export interface MemoryDocument {
  kind: 'workstreamSummary' | 'workstreamEvent';
  id: string;
  /** ISO time it was made. */
  created: string;
  /** Its `created` in ms since the epoch (NaN when it has none). */
  at: number;
  title: string;
  text: string;
  /** The source application (an event's only). */
  application?: string;
  /** Names the application filter matches, lower-cased (an event's: what it shows and its Application's name). */
  applications?: string[];
  url?: string;
  /** A summary's description (its DESCRIPTION annotation). */
  description?: string;
}

const createdOf = (value: JsonObject): string =>
  isObject(value.created) && typeof value.created.value === 'string' ? value.created.value : '';

/** What ranking needs of a document: its time (ms) and, for an event, its applications (lower-cased). */
export interface DocumentMeta {
  kind: MemoryDocument['kind'];
  at: number;
  applications?: string[];
}

/** A stored workstream event as a document: titled by its window (else its application), its text what it showed. */
export function eventDocument(record: MaterialRecord): MemoryDocument {
  const seen = seenIn(record.value);
  const created = createdOf(record.value);
  const own =
    isObject(record.value.application) && typeof record.value.application.name === 'string' ? record.value.application.name : undefined;
  return {
    kind: 'workstreamEvent',
    id: record.id,
    created,
    at: Date.parse(created),
    title: seen.window ?? seen.application,
    text: seen.text ?? '',
    application: seen.application,
    applications: [...new Set([seen.application, ...(own ? [own] : [])].map((name) => name.toLowerCase()))],
    ...(seen.url ? { url: seen.url } : {}),
  };
}

/** The ids of the annotations a summary lists. */
export const summaryAnnotations = (value: JsonObject): string[] =>
  isObject(value.annotations) && Array.isArray(value.annotations.iterable)
    ? value.annotations.iterable.flatMap((item) => (isObject(item) && typeof item.id === 'string' ? [item.id] : []))
    : [];

/**
 * A stored workstream summary as a document: its name, its SUMMARY annotation's text (else its
 * DESCRIPTION's, else its name) and its DESCRIPTION, of the annotations given (those it lists).
 */
export function summaryDocument(record: MaterialRecord, annotations: ReadonlyArray<AnnotationRecord | undefined>): MemoryDocument {
  const created = createdOf(record.value);
  const name = typeof record.value.name === 'string' ? record.value.name : '';
  const listed = new Set(summaryAnnotations(record.value));
  const own = annotations.filter((note): note is AnnotationRecord => note !== undefined && listed.has(note.id));
  const of = (type: string) => own.find((note) => note.type === type)?.text;
  const description = of('DESCRIPTION');
  return {
    kind: 'workstreamSummary',
    id: record.id,
    created,
    at: Date.parse(created),
    title: name,
    text: of('SUMMARY') ?? description ?? name,
    ...(description ? { description } : {}),
  };
}

/** A document's key in a relevance index: its kind and id (a summary and an event may share an id). */
export const documentKey = (document: Pick<MemoryDocument, 'kind' | 'id'>): string => `${document.kind}/${document.id}`;

/** The fields of a document the relevance index reads. */
export function documentFields(document: MemoryDocument): Partial<Record<Field, string>> {
  const about = [document.description, document.application, document.url].filter(Boolean).join('\n');
  return {
    text: document.text,
    ...(document.title ? { name: document.title } : {}),
    ...(about ? { description: about } : {}),
  };
}
