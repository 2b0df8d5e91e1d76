/**
 * Models as the service keeps them: the catalogue's (copilot/catalogue.ts) with their local state
 * (downloaded, loaded, score, fields an update changed), and custom models a client created
 * (a SeededModel), kept whole in the models store. The wire Model of each, and what a
 * SeededModel, a Model update and a score increment may say.
 */
import { KINDS } from '../../shared/graph.js';
import { checkShape } from '../../shared/shapes.js';
import type { ModelStateRecord } from '../../storage/storage.js';
import { catalogueModel, MODELS, modelWire, type CatalogueModel } from '../copilot/catalogue.js';
import { badRequest, clip } from '../http.js';
import { isObject, object, type JsonObject } from '../validate.js';
import { incrementedScore } from './material.js';

/** A model the service knows: a catalogue model (with its kept state, if any) or a custom one. */
export interface KnownModel {
  id: string;
  catalogue?: CatalogueModel;
  state?: ModelStateRecord;
}

/** A Model's fields that are its state, the service's to set (a download, a load, a score increment). */
const STATE_FIELDS = ['downloaded', 'downloading', 'loaded', 'score'] as const;

const withoutState = (model: JsonObject): JsonObject =>
  Object.fromEntries(Object.entries(model).filter(([key]) => !(STATE_FIELDS as readonly string[]).includes(key)));

/** Every model: the catalogue's in its order, then the custom ones, oldest first. */
export function knownModels(states: readonly ModelStateRecord[]): KnownModel[] {
  const byId = new Map(states.map((state) => [state.id, state]));
  const custom = states
    .filter((state) => state.model?.custom === true && !catalogueModel(state.id))
    .sort((a, b) => createdOf(a).localeCompare(createdOf(b)) || a.id.localeCompare(b.id));
  return [
    ...MODELS.map((model) => ({ id: model.id, catalogue: model, ...(byId.has(model.id) ? { state: byId.get(model.id)! } : {}) })),
    ...custom.map((state) => ({ id: state.id, state })),
  ];
}

function createdOf(state: ModelStateRecord): string {
  const created = state.model?.created;
  return isObject(created) && typeof created.value === 'string' ? created.value : '';
}

/** The model an id names, if the service knows it. */
export function findModel(states: readonly ModelStateRecord[], id: string): KnownModel | undefined {
  const state = states.find((s) => s.id === id);
  const catalogue = catalogueModel(id);
  if (catalogue) return { id, catalogue, ...(state ? { state } : {}) };
  return state?.model?.custom === true ? { id, state } : undefined;
}

/** A model's descriptive fields (a Model without its state). */
export function fieldsOf(known: KnownModel): JsonObject {
  return known.state?.model ?? withoutState(modelWire(known.catalogue!, { downloaded: false, downloading: false }));
}

/** Whether a model runs remotely (nothing to download or load). */
export const isCloud = (known: KnownModel): boolean => known.catalogue?.cloud ?? fieldsOf(known).cloud === true;

/** The wire Model: its fields, then its state (a local model's downloaded, downloading, loaded; its score). */
export function wireModel(known: KnownModel, downloading: boolean): JsonObject {
  const state = known.state;
  return {
    ...fieldsOf(known),
    ...(isCloud(known) ? {} : { downloaded: state?.downloaded ?? false, downloading, loaded: state?.loaded ?? false }),
    ...(state?.score ? { score: state.score } : {}),
  };
}

/** Whether a record says anything beyond the catalogue's (else it is removed). */
export const keeps = (record: ModelStateRecord): boolean =>
  record.downloaded || record.loaded === true || record.model !== undefined || record.score !== undefined;

/** The record of a model's state after `change` (undefined: nothing left to keep). */
export function nextState(known: KnownModel, change: Partial<Omit<ModelStateRecord, 'id'>>): ModelStateRecord | undefined {
  const record: ModelStateRecord = { downloaded: false, ...known.state, ...change, id: known.id };
  for (const key of Object.keys(record) as Array<keyof ModelStateRecord>) if (record[key] === undefined) delete record[key];
  return keeps(record) ? record : undefined;
}

function shaped(model: JsonObject, path: string) {
  const problem = checkShape('Model', model, path);
  if (problem) throw badRequest(`${problem}.`);
}

/**
 * A SeededModel as a custom model's record (its id given): strictly a SeededModel (the Model's
 * fields but its id and state, `downloaded` aside), `custom` true; `downloaded` is what the
 * client says of the model it adds (a cloud model has none).
 */
export function seededModel(body: unknown, id: string): ModelStateRecord {
  const path = 'seededModel';
  const seed = object(body, path);
  for (const key of ['id', 'loaded', 'downloading', 'score'])
    if (key in seed) throw badRequest(`${path}.${key}: unknown key (SeededModel has no ${key}).`);
  if (seed.custom === false) throw badRequest(`${path}.custom must be true (or absent): a model created here is a custom model.`);
  const model: JsonObject = { ...seed, id, custom: true };
  shaped(model, path);
  const downloaded = seed.downloaded === true && seed.cloud !== true;
  const { downloaded: _said, ...fields } = model;
  return { id, downloaded, model: fields };
}

const sameJson = (a: unknown, b: unknown): boolean => {
  if (isObject(a) && isObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)].filter((key) => a[key] !== undefined || b[key] !== undefined));
    return [...keys].every((key) => sameJson(a[key], b[key]));
  }
  return JSON.stringify(a) === JSON.stringify(b);
};

/** What changes each state field (a Model update cannot). */
const STATE_OPERATION: Record<(typeof STATE_FIELDS)[number], string> = {
  downloaded: 'POST /model/{model}/download, or /models/{model}/delete/cache',
  downloading: 'POST /model/{model}/download, or /model/{model}/download/cancel',
  loaded: 'POST /model/{model}/load, or /model/{model}/unload',
  score: 'POST /model/{model}/scores/increment',
};

/**
 * A Model update: strictly a Model of a known model; its descriptive fields replace the kept
 * ones. Its state fields, when sent, must be the model's (each is changed by its own
 * operation); a catalogue model stays what it is (not custom, cloud or not as catalogued).
 */
export function updatedFields(model: JsonObject, known: KnownModel, downloading: boolean): JsonObject {
  const path = 'model';
  shaped(model, path);
  const current = wireModel(known, downloading);
  for (const key of STATE_FIELDS) {
    if (model[key] !== undefined && !sameJson(model[key], current[key]))
      throw badRequest(`${path}.${key} is the model's state, not a field an update sets: ${STATE_OPERATION[key]} changes it.`);
  }
  if (known.catalogue) {
    if (model.custom === true) throw badRequest(`${path}.custom: ${clip(known.catalogue.name)} is a catalogue model, not a custom one.`);
    if (model.cloud !== known.catalogue.cloud)
      throw badRequest(
        `${path}.cloud: ${clip(known.catalogue.name)} is ${known.catalogue.cloud ? 'a cloud' : 'a local'} model of the catalogue.`,
      );
  } else if (model.custom === false) throw badRequest(`${path}.custom must stay true: the model was created as a custom model.`);
  return { ...withoutState(model), ...(known.catalogue ? {} : { custom: true }) };
}

const MODEL_ROW = KINDS.find((row) => row.kind === 'model')!;

/** A SeededScoreIncrement's `model` (or `models`) counts added to the model's Score. */
export function incrementedModelScore(body: unknown, known: KnownModel): JsonObject {
  const sent = object(body, 'seededScoreIncrement');
  const score = known.state?.score;
  return incrementedScore(MODEL_ROW, sent, score ? { score } : {}).score as JsonObject;
}
