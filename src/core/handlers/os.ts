/**
 * Handlers of OSApi (signing the local user in and out, launching an applet),
 * AllocationsApi (answered as for a user with no cloud) and the
 * WorkstreamPatternEngineApi vision status (long-term memory is off).
 */
import type { OperationContext, ServiceContext } from '../context.js';
import { OSAppletEnum } from '../enums.js';
import { badRequest, readJson, reply } from '../http.js';
import { embeddedSchema, knownKeys, object, oneOf, optional, required, type JsonObject } from '../validate.js';
import { publish } from './common.js';
import { localUser } from './user.js';

/**
 * The OS's stable id (the health socket's `ok:<id>`, connect's `os`, its own application entry):
 * the database's identity (a wiped database is another OS), or the id an older version kept.
 * Reading it writes nothing, so that a rejected request changes nothing.
 */
export const osId = async (service: ServiceContext) => (await service.storage.getMeta<string>('osId')) ?? service.storage.identity();

/** Long-term memory is off: never activated, and nothing degraded. */
export const visionStatus = (): JsonObject => ({ vision: { degraded: false } });

/** signIntoOS: the local profile is signed in (kept across restarts); answers it. */
export async function signIntoOS(context: OperationContext) {
  publish(context, await context.service.storage.setSignedIn(true));
  return reply((await localUser(context))!);
}

/** signOutOfOS: the local user is signed out (kept across restarts); answers the users left signed in: none. */
export async function signOutOfOS(context: OperationContext) {
  publish(context, await context.service.storage.setSignedIn(false));
  return reply({ iterable: [] });
}

/**
 * osAppletLaunch: no applet runs here. The answer names the port this service answers on, so
 * that a client that opens `http://localhost:<port>` reaches the service, not nothing.
 */
export async function osAppletLaunch(context: OperationContext) {
  const path = 'inactiveOSServerApplet';
  const body = await readJson(context.request, context.service.maxBodyBytes);
  if (body === undefined) throw badRequest(`The request body is required: send an InactiveOSServerApplet ({"type":"COPILOT"}).`);
  const applet = object(body, path);
  knownKeys(applet, ['schema', 'parent', 'port', 'type', 'handler'], path, 'InactiveOSServerApplet');
  optional(applet, 'schema', path, embeddedSchema);
  optional(applet, 'parent', path, object);
  optional(applet, 'handler', path, object);
  const type = required(applet, 'type', path, (v, p) => oneOf(v, OSAppletEnum, p));
  const { url } = context;
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  return reply({ port, type, handler: { type: 'pieces-os-worker', isFolder: false, isAsset: false } });
}

/** The AllocationCloud of a user with no cloud: disconnected, with no address. */
function noCloud(user: string): JsonObject {
  const none = { status: 'DISCONNECTED', url: '' };
  return { id: user, user, urls: { base: none, id: none }, status: { cloud: 'DISCONNECTED' }, project: '' };
}

/** allocationsConnectNewCloud: the local user has no cloud; answered as its disconnected allocation. */
export async function allocationsConnectNewCloud(context: OperationContext) {
  const body = await readJson(context.request, context.service.maxBodyBytes);
  const sent = body === undefined ? {} : object(body, 'userProfile');
  const user = (await localUser(context))?.id ?? (typeof sent.id === 'string' ? sent.id : '');
  return reply(noCloud(user as string));
}

/** allocationsDisconnectCloud: nothing is connected, so nothing is disconnected (a text answer, as the SDK reads it). */
export async function allocationsDisconnectCloud(context: OperationContext) {
  const body = await readJson(context.request, context.service.maxBodyBytes);
  if (body !== undefined) object(body, 'allocationCloud');
  return reply('The local user has no cloud allocation: nothing to disconnect.', { type: 'text' });
}

/** workstreamPatternEngineProcessorsVisionStatus: long-term memory is off. */
export async function workstreamPatternEngineProcessorsVisionStatus() {
  return reply(visionStatus());
}
