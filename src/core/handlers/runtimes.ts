/**
 * Handlers of OllamaApi and FoundryApi: the local model runtimes Pieces OS installs, as this host
 * truly has them. No host of this service can install, update or remove a program, so:
 *
 * - Ollama is the one a model option points at (`{type: 'ollama', baseUrl}`, the default model's
 *   or a catalogue model's own), asked for real: its status is installed, at the version its
 *   `GET /api/version` answers, when it answers (else not installed); an install with one that
 *   answers is complete at once (that Ollama: kept, listed, its snapshot and cancel answer it);
 *   with none configured, 501 naming why; with one that does not answer, 502 naming it.
 * - Foundry Local: no model option can point at one (the adapters speak OpenAI's and Ollama's
 *   APIs), so it is not installed, and an install is 501.
 * - Updates and uninstalls are 501 (a program's, its user's to make); no update ever runs, so
 *   the updates list is empty and an update's snapshot or cancel a 404.
 *
 * The status sockets send the status when they open.
 */
import type { OperationContext, OperationHandler, ServiceContext } from '../context.js';
import { ModelDownloadProgressStatusEnum } from '../enums.js';
import { clip, HttpError, notFound, readJson, reply } from '../http.js';
import { STREAM_HEADER, type Handshake } from '../stream-wire.js';
import {
  boolean,
  embeddedSchema,
  knownKeys,
  number,
  object,
  oneOf,
  optional,
  required,
  string,
  timestamp,
  type JsonObject,
} from '../validate.js';
import { clock } from './common.js';

/** How long a runtime is given to answer a status check. */
const ASK_MS = 5_000;
/** Most installs kept (the oldest go first). */
const KEPT_INSTALLS = 100;

interface Runtime {
  name: 'Ollama' | 'Foundry';
  api: 'OllamaApi' | 'FoundryApi';
  /** The path prefix, e.g. `/ollama`. */
  path: string;
  /** Its SDK model, e.g. `OllamaDeployment`. */
  deployment: string;
  /** The address of the runtime a model option points at, if any. */
  configured(service: ServiceContext): Promise<string | undefined>;
  /** Its version, asked of it at `base` (throws when it does not answer). */
  version(base: string): Promise<string>;
  /** Why there is none, when none is configured. */
  none: string;
}

const CANNOT_INSTALL = 'no host of this service (a browser, a Node program) can install, update or remove a program';

async function ollamaVersion(base: string): Promise<string> {
  const url = `${base}/api/version`;
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(ASK_MS) });
  } catch (error) {
    throw new Error(`${url} could not be reached: ${(error as Error).message}`);
  }
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  const body = (await response.json().catch(() => undefined)) as { version?: unknown } | undefined;
  if (typeof body?.version !== 'string') throw new Error(`${url} answered no version`);
  return body.version;
}

const OLLAMA: Runtime = {
  name: 'Ollama',
  api: 'OllamaApi',
  path: '/ollama',
  deployment: 'OllamaDeployment',
  async configured(service) {
    return (await service.copilot.endpoints()).find((endpoint) => endpoint.type === 'ollama')?.baseUrl.replace(/\/+$/, '');
  },
  version: ollamaVersion,
  none: `no Ollama is configured (a model option {"type": "ollama", "baseUrl": "http://127.0.0.1:11434", "model": …} points at one), and ${CANNOT_INSTALL}: install Ollama, then configure it`,
};

const FOUNDRY: Runtime = {
  name: 'Foundry',
  api: 'FoundryApi',
  path: '/foundry',
  deployment: 'FoundryDeployment',
  configured: async () => undefined,
  version: () => Promise.reject(new Error('no Foundry Local is configured')),
  none: `this host has no Foundry Local: no model option can point at one (the model adapters speak OpenAI's and Ollama's APIs), and ${CANNOT_INSTALL}`,
};

/** The installs kept, by runtime. */
const installsKey = (runtime: Runtime) => `${runtime.name.toLowerCase()}Installs`;

const installs = async (service: ServiceContext, runtime: Runtime) =>
  (await service.storage.getMeta<JsonObject[]>(installsKey(runtime))) ?? [];

/** The runtime as it answers now: installed, at its version, when it answers. */
async function installation(service: ServiceContext, runtime: Runtime, base: string | undefined): Promise<JsonObject | undefined> {
  if (!base) return undefined;
  try {
    const version = await runtime.version(base);
    return { status: 'COMPLETED', updated: { value: service.clock.now().toISOString() }, percentage: 100, version, userManaged: true };
  } catch {
    return undefined;
  }
}

async function status(service: ServiceContext, runtime: Runtime): Promise<JsonObject> {
  const installed = await installation(service, runtime, await runtime.configured(service));
  return installed ? { installation: installed } : {};
}

const operation = (runtime: Runtime, method: string, tail: string, name: string) =>
  `${method} ${runtime.path}${tail} is the Pieces OS operation ${runtime.api}.${name}`;

/** A deployment body, when one is sent: strictly an OllamaDeployment (FoundryDeployment). */
async function deploymentBody(context: OperationContext, runtime: Runtime): Promise<void> {
  const body = await readJson(context.request, context.service.maxBodyBytes);
  if (body === undefined) return;
  const path = `${runtime.name.toLowerCase()}Deployment`;
  const sent = object(body, path);
  knownKeys(sent, ['schema', 'id', 'status', 'updated', 'percentage', 'version', 'userManaged'], path, runtime.deployment);
  optional(sent, 'schema', path, embeddedSchema);
  optional(sent, 'id', path, string);
  // OllamaDeploymentStatusEnum and FoundryDeploymentStatusEnum have the download progress's values.
  optional(sent, 'status', path, (v, p) => oneOf(v, ModelDownloadProgressStatusEnum, p));
  optional(sent, 'updated', path, timestamp);
  if (sent.percentage !== null) optional(sent, 'percentage', path, number);
  required(sent, 'version', path, string);
  optional(sent, 'userManaged', path, boolean);
}

function handlers(runtime: Runtime) {
  const install: OperationHandler = async (context) => {
    const { service } = context;
    const base = await runtime.configured(service);
    const what = operation(runtime, 'POST', '/install', `${runtime.name.toLowerCase()}Install`);
    if (!base) throw new HttpError(501, `${what}, which this service cannot do: ${runtime.none}.`);
    let version: string;
    try {
      version = await runtime.version(base);
    } catch (error) {
      throw new HttpError(
        502,
        `${what}: the ${runtime.name} configured at ${base} does not answer (${(error as Error).message}), and ${CANNOT_INSTALL}: start it, then ask again.`,
      );
    }
    const time = clock(context);
    const deployment = {
      id: time.newId(),
      status: 'COMPLETED',
      updated: { value: time.now().toISOString() },
      percentage: 100,
      version,
      userManaged: true,
    };
    await service.storage.updateMeta<JsonObject[]>(installsKey(runtime), (kept) => [...(kept ?? []), deployment].slice(-KEPT_INSTALLS));
    return reply(deployment);
  };

  const installById = async (context: OperationContext) => {
    const id = context.params.identifier ?? '';
    const found = (await installs(context.service, runtime)).find((deployment) => deployment.id === id);
    if (!found)
      throw notFound(`No ${runtime.name} install ${clip(JSON.stringify(id))}: GET ${runtime.path}/installs lists those made here.`);
    return found;
  };

  const noUpdate = (context: OperationContext) =>
    notFound(
      `No ${runtime.name} update ${clip(JSON.stringify(context.params.identifier ?? ''))}: none runs here (POST ${runtime.path}/update is answered 501: ${CANNOT_INSTALL}).`,
    );

  const cannot =
    (method: string, tail: string, name: string, why: string): OperationHandler =>
    async (context) => {
      await deploymentBody(context, runtime);
      const base = await runtime.configured(context.service);
      const reason = base ? `the ${runtime.name} at ${base} is its user's to ${why}, and ${CANNOT_INSTALL}` : runtime.none;
      throw new HttpError(501, `${operation(runtime, method, tail, name)}, which this service cannot do: ${reason}.`);
    };

  const stream: OperationHandler = async (context) => {
    const { request, url } = context;
    if (request.headers.get(STREAM_HEADER) !== 'handshake') {
      const path = clip(url.pathname);
      throw new HttpError(426, `${path} is a WebSocket: connect with new WebSocket("ws://${url.host}${path}").`, { Upgrade: 'websocket' });
    }
    return reply({ seq: 0, message: await status(context.service, runtime) } satisfies Handshake);
  };

  const lower = runtime.name.toLowerCase();
  return {
    install,
    installSnapshot: async (context: OperationContext) => reply(await installById(context)),
    /** A finished install has nothing to cancel: answered as it is. */
    installCancel: async (context: OperationContext) => reply(await installById(context)),
    installsSnapshot: async (context: OperationContext) => reply({ iterable: await installs(context.service, runtime) }),
    statusCheck: async (context: OperationContext) => reply(await status(context.service, runtime)),
    statusStream: stream,
    uninstall: cannot('POST', '/uninstall', `${lower}Uninstall`, 'remove'),
    update: cannot('POST', '/update', `${lower}Update`, 'update'),
    updateSnapshot: async (context: OperationContext) => reply(noUpdate(context)),
    updateCancel: async (context: OperationContext) => reply(noUpdate(context)),
    updatesSnapshot: async () => reply({ iterable: [] }),
  };
}

const ollama = handlers(OLLAMA);
export const ollamaInstall = ollama.install;
export const ollamaInstallSnapshot = ollama.installSnapshot;
export const ollamaInstallCancel = ollama.installCancel;
export const ollamaInstallsSnapshot = ollama.installsSnapshot;
export const ollamaStatusCheck = ollama.statusCheck;
export const ollamaStatusCheckStream = ollama.statusStream;
export const ollamaUninstall = ollama.uninstall;
export const ollamaUpdate = ollama.update;
export const ollamaUpdateSnapshot = ollama.updateSnapshot;
export const ollamaUpdateCancel = ollama.updateCancel;
export const ollamaUpdatesSnapshot = ollama.updatesSnapshot;

const foundry = handlers(FOUNDRY);
export const foundryInstall = foundry.install;
export const foundryInstallSnapshot = foundry.installSnapshot;
export const foundryInstallCancel = foundry.installCancel;
export const foundryInstallsSnapshot = foundry.installsSnapshot;
export const foundryStatusCheck = foundry.statusCheck;
export const foundryStatusCheckStream = foundry.statusStream;
export const foundryUninstall = foundry.uninstall;
export const foundryUpdate = foundry.update;
export const foundryUpdateSnapshot = foundry.updateSnapshot;
export const foundryUpdateCancel = foundry.updateCancel;
export const foundryUpdatesSnapshot = foundry.updatesSnapshot;
