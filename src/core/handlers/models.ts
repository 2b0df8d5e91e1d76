/**
 * Handlers of ModelsApi and ModelApi: the catalogue (copilot/catalogue.ts) with
 * each model's local state, and local models' downloads.
 *
 * A download (`POST /model/{model}/download`) runs the model's adapter's pull
 * (Ollama's pull API for a model mapped to Ollama, with its real progress);
 * an adapter with nothing to fetch completes at once. Its progress goes out on
 * `/model/{model}/download/progress` (ModelDownloadProgress frames: INITIALIZED,
 * IN-PROGRESS with the percentage, COMPLETED, or FAILED, or CANCELED); once it
 * completed the model is `downloaded: true`, kept in the database. Cancel stops
 * a running download; delete-cache makes a downloaded model not downloaded
 * again (and removes it from Ollama for a model mapped there).
 */
import type { OperationContext, ServiceContext } from '../context.js';
import { catalogueModel, MODELS, modelWire, type CatalogueModel } from '../copilot/catalogue.js';
import { ModelError } from '../copilot/model.js';
import { EventFrames } from '../event-frames.js';
import { badRequest, clip, HttpError, notFound, readJson, reply } from '../http.js';
import { STREAM_HEADER, type StreamRequestKind } from '../stream-wire.js';
import { embeddedSchema, knownKeys, object, optional } from '../validate.js';
import { publish } from './common.js';
import { identifierStream } from './streams.js';

/** The marker header value a model's progress socket sends with its request. */
const PROGRESS_MARKER: StreamRequestKind = 'progress';

/** The catalogue model the path names; a 404 naming it when there is none. */
function pathModel(context: OperationContext): CatalogueModel {
  const id = context.params.model ?? '';
  const model = catalogueModel(id);
  if (!model) throw notFound(`No model with id ${clip(JSON.stringify(id))}: GET /models lists the models.`);
  return model;
}

/** Every model's kept state: the ids of the downloaded ones. */
async function downloadedIds(service: ServiceContext): Promise<Set<string>> {
  return new Set((await service.storage.listModelStates()).filter((state) => state.downloaded).map((state) => state.id));
}

async function wire(service: ServiceContext, model: CatalogueModel) {
  const downloaded = await downloadedIds(service);
  return modelWire(model, { downloaded: downloaded.has(model.id), downloading: service.copilot.downloads.running(model.id) });
}

/** The last Models body, and the local state it was made for: made again only when that changes. */
let snapshot: { state: string; body: string } | undefined;

export async function modelsSnapshot({ service }: OperationContext) {
  const downloaded = await downloadedIds(service);
  const { downloads } = service.copilot;
  const running = MODELS.filter((model) => downloads.running(model.id)).map((model) => model.id);
  const state = `${[...downloaded].sort().join(',')}|${running.join(',')}`;
  if (snapshot?.state !== state) {
    const iterable = MODELS.map((model) =>
      modelWire(model, { downloaded: downloaded.has(model.id), downloading: running.includes(model.id) }),
    );
    snapshot = { state, body: JSON.stringify({ iterable }) };
  }
  return reply(snapshot.body);
}

export async function modelsSpecificModelSnapshot(context: OperationContext) {
  return reply(await wire(context.service, pathModel(context)));
}

/** The models identifier stream: every catalogue model, in the catalogue's order; a change per download kept or deleted. */
export const modelsStreamIdentifiers = identifierStream('model', () => MODELS.map((model) => model.id));

/**
 * modelSpecificModelDownload: starts the download of a local model (a cloud model has none);
 * a model already downloaded, or being downloaded, is answered as it is. A download with
 * nothing to fetch is complete when this answers.
 */
export async function modelSpecificModelDownload(context: OperationContext) {
  const { service } = context;
  const model = pathModel(context);
  if (model.cloud) throw badRequest(`${model.name} (${model.id}) is a cloud model: it is answered remotely and has nothing to download.`);
  const { downloads } = service.copilot;
  if (downloads.running(model.id) || (await downloadedIds(service)).has(model.id)) return reply(await wire(service, model));
  const adapter = await service.copilot.model(model.id);
  const keep = async () => publish(context, await service.storage.setModelState({ id: model.id, downloaded: true }));
  const done = downloads.run(model.id, adapter.pull?.bind(adapter), keep);
  // Nothing to fetch: answered once it is kept. A pull runs on; its progress goes out on the model's socket.
  if (!adapter.pull) await done;
  return reply(await wire(service, model));
}

/** modelSpecificModelDownloadCancel: stops the model's running download (it ends CANCELED); answered as the model is then. */
export async function modelSpecificModelDownloadCancel(context: OperationContext) {
  const model = pathModel(context);
  context.service.copilot.downloads.cancel(model.id);
  return reply(await wire(context.service, model));
}

/**
 * modelsDeleteSpecificModelCache: a downloaded model is not downloaded any more (a running
 * download is canceled first); for a model mapped to Ollama the model is deleted there too.
 */
export async function modelsDeleteSpecificModelCache(context: OperationContext) {
  const { service } = context;
  const model = pathModel(context);
  const body = await readJson(context.request, service.maxBodyBytes);
  if (body !== undefined) {
    const input = object(body, 'modelDeleteCacheInput');
    knownKeys(input, ['schema'], 'modelDeleteCacheInput', 'ModelDeleteCacheInput');
    optional(input, 'schema', 'modelDeleteCacheInput', embeddedSchema);
  }
  if (model.cloud) throw badRequest(`${model.name} (${model.id}) is a cloud model: it has no downloaded files to delete.`);
  service.copilot.downloads.cancel(model.id);
  if ((await downloadedIds(service)).has(model.id)) {
    const adapter = await service.copilot.model(model.id);
    try {
      await adapter.remove?.();
    } catch (error) {
      if (error instanceof ModelError) return reply(error.message, { status: 502, type: 'text' });
      throw error;
    }
    publish(context, await service.storage.setModelState({ id: model.id, downloaded: false }));
  }
  return reply({ model: { id: model.id } });
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
  const model = pathModel(context);
  const { downloads } = service.copilot;
  let stop = () => {};
  const frames = new EventFrames(() => stop());
  const send = (frame: object) => frames.push([JSON.stringify(frame)]);
  const current = downloads.current(model.id);
  if (current) send(current);
  stop = downloads.subscribe(model.id, send);
  return reply(frames);
}
