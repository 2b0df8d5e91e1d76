/**
 * Handlers of ModelsApi and ModelApi: the catalogue (copilot/catalogue.ts) and custom models a
 * client created (models/model.ts), each with its local state kept in the models store:
 * downloaded, loaded, its score, its fields as an update left them.
 *
 * A download (`POST /model/{model}/download`) runs the model's adapter's pull
 * (Ollama's pull API for a model fetched by Ollama, with its real progress);
 * an adapter with nothing to fetch completes at once. Its progress goes out on
 * `/model/{model}/download/progress` (ModelDownloadProgress frames: INITIALIZED,
 * IN-PROGRESS with the percentage, COMPLETED, or FAILED, or CANCELED); once it
 * completed the model is `downloaded: true`, kept in the database. Cancel stops
 * a running download; delete-cache makes a downloaded model not downloaded
 * again (and removes it from Ollama for a model fetched there). A downloaded
 * model can be loaded and unloaded (`loaded`, kept); every change of a model's
 * state goes out on the models stream.
 */
import type { OperationContext, ServiceContext } from '../context.js';
import { ModelError, type ModelAdapter } from '../copilot/model.js';
import { ollamaModel } from '../copilot/ollama.js';
import { EventFrames } from '../event-frames.js';
import { badRequest, clip, HttpError, notFound, readJson, reply } from '../http.js';
import {
  fieldsOf,
  findModel,
  incrementedModelScore,
  isCloud,
  knownModels,
  nextState,
  seededModel,
  updatedFields,
  wireModel,
  type KnownModel,
} from '../models/model.js';
import { STREAM_HEADER, type StreamRequestKind } from '../stream-wire.js';
import { embeddedSchema, knownKeys, object, optional } from '../validate.js';
import type { ModelStateRecord } from '../../storage/storage.js';
import { clock, publish } from './common.js';
import { identifierStream } from './streams.js';

/** The marker header value a model's progress socket sends with its request. */
const PROGRESS_MARKER: StreamRequestKind = 'progress';

const noModel = (id: string) => notFound(`No model with id ${clip(JSON.stringify(id))}: GET /models lists the models.`);

/** The model an id names; a 404 naming it when there is none. */
async function modelById(service: ServiceContext, id: string): Promise<KnownModel> {
  const known = findModel(await service.storage.listModelStates(), id);
  if (!known) throw noModel(id);
  return known;
}

/** The model the path names. */
const pathModel = (context: OperationContext) => modelById(context.service, context.params.model ?? '');

const downloading = (service: ServiceContext, id: string) => service.copilot.downloads.running(id);

const wire = (service: ServiceContext, known: KnownModel) => wireModel(known, downloading(service, known.id));

/** The model's wire form as it is now (read again after a write). */
const current = async (service: ServiceContext, id: string) => wire(service, await modelById(service, id));

/**
 * Writes one model's state, `change` made of it as it is in the transaction (a model gone
 * meanwhile is a 404); announces the change.
 */
async function setState(
  context: OperationContext,
  id: string,
  change: (known: KnownModel) => Partial<Omit<ModelStateRecord, 'id'>> | undefined,
): Promise<void> {
  const changes = await context.service.storage.editModelStates((states) => {
    const known = findModel([...states.values()], id);
    if (!known) throw noModel(id);
    const edit = change(known);
    return edit ? [{ id, record: nextState(known, edit) }] : [];
  });
  publish(context, changes);
}

/**
 * The adapter that fetches a model: a catalogue model's own (else the default); a custom
 * model's is the default one, or, when that is an Ollama, that Ollama pulling the model's
 * `unique` (else its name).
 */
async function adapterOf(service: ServiceContext, known: KnownModel): Promise<ModelAdapter> {
  if (known.catalogue) return service.copilot.model(known.id);
  const adapter = await service.copilot.model();
  const fields = fieldsOf(known);
  const name = typeof fields.unique === 'string' && fields.unique ? fields.unique : String(fields.name);
  return adapter.endpoint?.type === 'ollama' ? ollamaModel({ type: 'ollama', baseUrl: adapter.endpoint.baseUrl, model: name }) : adapter;
}

/** The last Models body, and the local state it was made for: made again only when that changes. */
let snapshot: { state: string; body: string } | undefined;

export async function modelsSnapshot({ service }: OperationContext) {
  const states = await service.storage.listModelStates();
  const models = knownModels(states);
  const running = models.filter((model) => downloading(service, model.id)).map((model) => model.id);
  const state = `${JSON.stringify(states)}|${running.join(',')}`;
  if (snapshot?.state !== state) {
    const iterable = models.map((model) => wireModel(model, running.includes(model.id)));
    snapshot = { state, body: JSON.stringify({ iterable }) };
  }
  return reply(snapshot.body);
}

export async function modelsSpecificModelSnapshot(context: OperationContext) {
  return reply(wire(context.service, await pathModel(context)));
}

/** The models identifier stream: every model (the catalogue's, then the custom ones); a change per model whose state changed. */
export const modelsStreamIdentifiers = identifierStream('model', async (_stored, { service }) =>
  knownModels(await service.storage.listModelStates()).map((model) => model.id),
);

/** modelsCreateNewModel: a custom model from a SeededModel (strict), kept, listed after the catalogue's and streamed. */
export async function modelsCreateNewModel(context: OperationContext) {
  const { service } = context;
  const body = await readJson(context.request, service.maxBodyBytes);
  if (body === undefined) throw badRequest('The request body is required: send a SeededModel.');
  const record = seededModel(body, clock(context).newId());
  publish(context, await service.storage.editModelStates(() => [{ id: record.id, record }]));
  return reply(await current(service, record.id));
}

/** modelsDeleteSpecificModel: a custom model is deleted (a running download stopped first); the catalogue's stay. */
export async function modelsDeleteSpecificModel(context: OperationContext) {
  const { service } = context;
  const known = await pathModel(context);
  if (known.catalogue)
    throw badRequest(
      `${clip(known.catalogue.name)} is a catalogue model, which cannot be deleted: POST /models/${known.id}/delete/cache deletes its download.`,
    );
  service.copilot.downloads.cancel(known.id);
  publish(
    context,
    await service.storage.editModelStates((states) => {
      if (!findModel([...states.values()], known.id)) throw noModel(known.id);
      return [{ id: known.id }];
    }),
  );
  return reply();
}

/** modelUpdate: a Model's descriptive fields replace the kept ones (strict; its state fields must be as they are). */
export async function modelUpdate(context: OperationContext) {
  const { service } = context;
  const body = await readJson(context.request, service.maxBodyBytes);
  if (body === undefined) throw badRequest('The request body is required: send the Model, as GET /model/{model} answers it.');
  const sent = object(body, 'model');
  if (typeof sent.id !== 'string') throw badRequest('model.id is required: the id of the model to update.');
  const id = sent.id;
  await modelById(service, id);
  await setState(context, id, (known) => ({ model: updatedFields(sent, known, downloading(service, id)) }));
  return reply(await current(service, id));
}

/** modelScoresIncrement: the SeededScoreIncrement's `model` counts are added to the model's Score. */
export async function modelScoresIncrement(context: OperationContext) {
  const { service } = context;
  const known = await pathModel(context);
  const body = await readJson(context.request, service.maxBodyBytes);
  if (body === undefined) throw badRequest('The request body is required: send a SeededScoreIncrement ({"model": {"reuse": true}}).');
  incrementedModelScore(body, known);
  await setState(context, known.id, (now) => ({ score: incrementedModelScore(body, now) }));
  return reply();
}

/** A local model that can be loaded: downloaded (a cloud model has nothing to load). */
function loadable(known: KnownModel) {
  const name = clip(String(fieldsOf(known).name));
  if (isCloud(known)) throw badRequest(`${name} (${known.id}) is a cloud model: it is answered remotely and has nothing to load.`);
  if (!known.state?.downloaded) throw badRequest(`${name} (${known.id}) is not downloaded: POST /model/${known.id}/download first.`);
}

/** modelSpecificModelLoad: a downloaded local model is loaded (kept, announced); answered as it is then. */
export async function modelSpecificModelLoad(context: OperationContext) {
  const known = await pathModel(context);
  loadable(known);
  await setState(context, known.id, (now) => {
    loadable(now);
    return now.state?.loaded ? undefined : { loaded: true };
  });
  return reply(await current(context.service, known.id));
}

/** modelSpecificModelUnload: the model is not loaded any more; answered as it is then. */
export async function modelSpecificModelUnload(context: OperationContext) {
  const known = await pathModel(context);
  await setState(context, known.id, (now) => (now.state?.loaded ? { loaded: undefined } : undefined));
  return reply(await current(context.service, known.id));
}

/** unloadModels: every loaded model is unloaded, in one write. */
export async function unloadModels(context: OperationContext) {
  const changes = await context.service.storage.editModelStates((states) =>
    [...states.values()]
      .filter((state) => state.loaded)
      .map((state) => ({ id: state.id, record: nextState({ id: state.id, state }, { loaded: undefined }) })),
  );
  publish(context, changes);
  return reply();
}

/**
 * modelSpecificModelDownload: starts the download of a local model (a cloud model has none);
 * a model already downloaded, or being downloaded, is answered as it is. A download with
 * nothing to fetch is complete when this answers.
 */
export async function modelSpecificModelDownload(context: OperationContext) {
  const { service } = context;
  const known = await pathModel(context);
  if (isCloud(known))
    throw badRequest(
      `${clip(String(fieldsOf(known).name))} (${known.id}) is a cloud model: it is answered remotely and has nothing to download.`,
    );
  const { downloads } = service.copilot;
  if (downloads.running(known.id) || known.state?.downloaded) return reply(wire(service, known));
  const adapter = await adapterOf(service, known);
  const keep = () => setState(context, known.id, () => ({ downloaded: true }));
  const done = downloads.run(known.id, adapter.pull?.bind(adapter), keep);
  // Nothing to fetch: answered once it is kept. A pull runs on; its progress goes out on the model's socket.
  if (!adapter.pull) await done;
  return reply(await current(service, known.id));
}

/** modelSpecificModelDownloadCancel: stops the model's running download (it ends CANCELED); answered as the model is then. */
export async function modelSpecificModelDownloadCancel(context: OperationContext) {
  const known = await pathModel(context);
  context.service.copilot.downloads.cancel(known.id);
  return reply(wire(context.service, known));
}

/**
 * modelsDeleteSpecificModelCache: a downloaded model is not downloaded (nor loaded) any more (a
 * running download is canceled first); for a model fetched by Ollama the model is deleted there too.
 */
export async function modelsDeleteSpecificModelCache(context: OperationContext) {
  const { service } = context;
  const known = await pathModel(context);
  const body = await readJson(context.request, service.maxBodyBytes);
  if (body !== undefined) {
    const input = object(body, 'modelDeleteCacheInput');
    knownKeys(input, ['schema'], 'modelDeleteCacheInput', 'ModelDeleteCacheInput');
    optional(input, 'schema', 'modelDeleteCacheInput', embeddedSchema);
  }
  if (isCloud(known))
    throw badRequest(`${clip(String(fieldsOf(known).name))} (${known.id}) is a cloud model: it has no downloaded files to delete.`);
  service.copilot.downloads.cancel(known.id);
  if (known.state?.downloaded) {
    const adapter = await adapterOf(service, known);
    try {
      await adapter.remove?.();
    } catch (error) {
      if (error instanceof ModelError) return reply(error.message, { status: 502, type: 'text' });
      throw error;
    }
    await setState(context, known.id, () => ({ downloaded: false, loaded: undefined }));
  }
  return reply({ model: { id: known.id } });
}

/**
 * The model's download progress socket: the page's socket shim asks with the marker header and
 * gets the ModelDownloadProgress frames as server-sent events, as long as it listens (the frame
 * of a running download first).
 */
export async function modelSpecificModelDownloadProgress(context: OperationContext) {
  const { request, url, service } = context;
  if (request.headers.get(STREAM_HEADER) !== PROGRESS_MARKER) {
    throw new HttpError(426, `${clip(url.pathname)} is a WebSocket: connect with new WebSocket("ws://${url.host}${clip(url.pathname)}").`, {
      Upgrade: 'websocket',
    });
  }
  const model = await pathModel(context);
  const { downloads } = service.copilot;
  let stop = () => {};
  const frames = new EventFrames(() => stop());
  const send = (frame: object) => frames.push([JSON.stringify(frame)]);
  const current = downloads.current(model.id);
  if (current) send(current);
  stop = downloads.subscribe(model.id, send);
  return reply(frames);
}
