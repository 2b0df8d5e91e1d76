/** The other records of the data format: sessions, events, activities, external applications, anchors, models, materials. */
import { AnchorTypeEnum, MechanismEnum } from '../enums.js';
import type { Clock } from '../clock.js';
import { catalogueModel } from '../copilot/catalogue.js';
import { KINDS } from '../../shared/graph.js';
import { checkShape } from '../../shared/shapes.js';
import { badRequest } from '../http.js';
import { parseApplication } from '../models/application.js';
import { fieldsOf } from '../models/material-shapes.js';
import type {
  ActivityRecord,
  AnchorRecord,
  EventKind,
  EventRecord,
  ExternalApplicationRecord,
  GenericKind,
  MaterialRecord,
  ModelStateRecord,
  SessionRecord,
} from '../../storage/schema.js';
import { array, boolean, object, oneOf, optional, required, string, uuid } from '../validate.js';
import { dense, grouped, iso, json, unique } from './fields.js';

const EVENT_KINDS: readonly EventKind[] = ['interaction', 'keyboard', 'installation', 'update'];

export function parseSession(value: unknown, path: string, clock: Clock): SessionRecord {
  const input = object(value, path);
  optional(input, 'closed', path, grouped);
  optional(input, 'application', path, uuid);
  return {
    ...input,
    id: optional(input, 'id', path, uuid) ?? clock.newId(),
    opened: (optional(input, 'opened', path, grouped) ?? { value: clock.now().toISOString() }) as SessionRecord['opened'],
  } as SessionRecord;
}

export function parseEvent(value: unknown, path: string, clock: Clock): EventRecord {
  const input = object(value, path);
  optional(input, 'application', path, uuid);
  return {
    ...input,
    id: optional(input, 'id', path, uuid) ?? clock.newId(),
    kind: required(input, 'kind', path, (v, p) => oneOf(v, EVENT_KINDS, p)),
    at: optional(input, 'at', path, iso) ?? clock.now().toISOString(),
    payload: required(input, 'payload', path, object),
  } as EventRecord;
}

export function parseActivity(value: unknown, path: string): ActivityRecord {
  const input = object(value, path);
  const asset = optional(input, 'asset', path, uuid);
  return {
    id: required(input, 'id', path, uuid),
    created: required(input, 'created', path, iso),
    order: required(input, 'order', path, string),
    event: required(input, 'event', path, object),
    application: parseApplication(required(input, 'application', path, object), `${path}.application`) as ActivityRecord['application'],
    mechanism: required(input, 'mechanism', path, (v, p) => oneOf(v, MechanismEnum, p)),
    ...(asset ? { asset } : {}),
  };
}

export function parseExternal(value: unknown, path: string): ExternalApplicationRecord {
  const input = object(value, path);
  const version = optional(input, 'version', path, string);
  return { name: required(input, 'name', path, string), ...(version === undefined ? {} : { version }) };
}

export function parseAnchor(value: unknown, path: string, clock: Clock): AnchorRecord {
  const input = object(value, path);
  required(input, 'type', path, (v, p) => oneOf(v, AnchorTypeEnum, p));
  required(object(required(input, 'points', path, object), `${path}.points`), 'iterable', `${path}.points`, array);
  const id = optional(input, 'id', path, uuid) ?? clock.newId();
  const created = optional(input, 'created', path, grouped) ?? { value: clock.now().toISOString() };
  const updated = optional(input, 'updated', path, grouped) ?? created;
  return { id, created: created.value as string, json: JSON.stringify({ ...input, id, created, updated }) };
}

export function parseModelState(value: unknown, path: string): ModelStateRecord {
  const input = object(value, path);
  const id = required(input, 'id', path, string);
  if (!catalogueModel(id)) throw badRequest(`${path}.id ${JSON.stringify(id)} is not a model of the catalogue (GET /models lists them).`);
  return { id, downloaded: required(input, 'downloaded', path, boolean) };
}

/** The kinds the generic path stores, with their models (the graph table's rows with no hand-written store). */
const MATERIAL_MODELS = new Map(KINDS.filter((row) => !row.own).map((row) => [row.kind as GenericKind, row.model]));
const MATERIAL_KINDS = [...MATERIAL_MODELS.keys()];

const isMaterialKind = (kind: string): kind is GenericKind => (MATERIAL_KINDS as readonly string[]).includes(kind);

/**
 * `materials`: per kind, its records' wire JSON in creation order (the order given), each with an
 * id (a UUID; assigned when missing, unique in its kind) and its `created` and `updated` times
 * (now, and `created`, when missing). A record is kept as written otherwise; it must be JSON.
 */
export function parseMaterials(value: unknown, clock: Clock): Array<Omit<MaterialRecord, 'seq'>> {
  const path = 'data.materials';
  const section = object(value, path);
  return Object.keys(section).flatMap((kind) => {
    if (!isMaterialKind(kind)) throw badRequest(`${path} has an unknown kind "${kind}"; the kinds are ${MATERIAL_KINDS.join(', ')}.`);
    const records = dense(array(section[kind], `${path}.${kind}`)).map((item, i) => {
      const at = `${path}.${kind}[${i}]`;
      const input = object(item, at);
      json(input, at);
      const id = optional(input, 'id', at, uuid) ?? clock.newId();
      const created = optional(input, 'created', at, grouped) ?? { value: clock.now().toISOString() };
      const updated = optional(input, 'updated', at, grouped) ?? created;
      // `updated` given where the model has one (a Share, a Backup have none).
      const record = { ...input, id, created, ...(fieldsOf(MATERIAL_MODELS.get(kind)!)?.has('updated') ? { updated } : {}) };
      // Strictly its SDK model, as the generic path answers it.
      const problem = checkShape(MATERIAL_MODELS.get(kind)!, record, at);
      if (problem) throw badRequest(`${problem}.`);
      return { kind, id, value: record };
    });
    return unique(records, (m) => m.id, `materials.${kind}`);
  });
}
