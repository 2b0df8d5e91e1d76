/** Handlers of the Applications operations. */
import type { OperationContext, ServiceContext } from '../context.js';
import { PIECES_OS_VERSION } from '../../shared/version.js';
import { osId, platformOf } from './os.js';
import { badRequest, notFound, readJson, reply } from '../http.js';
import { applicationWire, browserApplication, parseApplication } from '../models/application.js';
import { detectedApplications, relatedApplications } from '../models/external.js';
import type { ApplicationRecord, EventKind } from '../../storage/schema.js';
import { publish } from './common.js';
import { defined, embeddedSchema, integerArray, object, optional, required, string, uuid, type JsonObject } from '../validate.js';

const now = ({ service }: OperationContext) => service.clock.now().toISOString();

/**
 * The application an event or session is scoped to: the `X-Application-ID` header, or
 * the `application` header connected clients send, when present (it must name
 * a registered application, or one the same request registers; the OS's own entry,
 * listed with them, has no usage of its own and is refused by name).
 */
async function scope({ request, service }: OperationContext, registering: ApplicationRecord[] = []) {
  const name = request.headers.get('x-application-id') !== null ? 'X-Application-ID' : 'application';
  const header = request.headers.get(name);
  if (header === null || header === '') return registering[0]?.id;
  const id = uuid(header, `The ${name} header`);
  if (registering.some((a) => a.id === id) || (await service.storage.hasApplication(id))) return id;
  if (id === (await osId(service))) {
    throw badRequest(
      `Application ${id} (${name} header) is the OS's own entry (OS_SERVER): it records no usage events or sessions. Send them with a registered application's id, or without the header.`,
    );
  }
  throw notFound(`No application ${id} is registered (${name} header).`);
}

/** The OS's own application entry (`OS_SERVER`), listed first; it has no usage events. */
async function osApplication(service: ServiceContext) {
  const id = await osId(service);
  const platform = platformOf(service.userAgent) ?? 'WEB';
  const application: ApplicationRecord = {
    id,
    name: 'OS_SERVER',
    version: PIECES_OS_VERSION,
    platform,
    onboarded: true,
    privacy: 'OPEN',
    capabilities: 'LOCAL',
  };
  return { application, engagement: { interactions: 0, keyboard: 0, installations: 0, updates: 0 } };
}

export async function applicationsSnapshot({ service }: OperationContext) {
  const [os, applications] = await Promise.all([osApplication(service), service.storage.listApplications()]);
  // The OS's entry first, then by name and version (ids are random: their order would be a run's).
  const key = ({ application }: (typeof applications)[number]) => `${application.name}\u0000${application.version}\u0000${application.id}`;
  const others = applications
    .filter((a) => a.application.id !== os.application.id)
    .sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const listed = [os, ...others];
  return reply({ iterable: listed.map((a) => applicationWire(a.application, a.engagement)) });
}

export async function applicationsSpecificApplicationSnapshot({ params, service }: OperationContext) {
  const id = uuid(params.application, 'The application id');
  const os = await osApplication(service);
  const found = id === os.application.id ? os : await service.storage.getApplication(id);
  if (!found) throw notFound(`No application with id ${id}.`);
  return reply(applicationWire(found.application, found.engagement));
}

export async function applicationsRegister(context: OperationContext) {
  const { request, service } = context;
  const body = await readJson(request, service.maxBodyBytes);
  const application =
    body === undefined
      ? browserApplication(await service.storage.ensureMeta('browserApplicationId', service.clock.newId), service.userAgent)
      : parseApplication(body);
  publish(context, await service.storage.putApplication(application));
  const stored = await service.storage.getApplication(application.id);
  return reply(applicationWire(stored!.application, stored!.engagement));
}

/** applicationUpdate: replaces a registered application (404 when it is not registered). */
export async function applicationUpdate(context: OperationContext) {
  const { request, service } = context;
  const application = parseApplication(await readJson(request, service.maxBodyBytes));
  if (!(await service.storage.hasApplication(application.id))) throw notFound(`No application with id ${application.id}.`);
  publish(context, await service.storage.putApplication(application));
  const stored = await service.storage.getApplication(application.id);
  return reply(applicationWire(stored!.application, stored!.engagement));
}

export async function applicationsExternalSnapshot({ service }: OperationContext) {
  const reported = await service.storage.listExternalApplications();
  return reply({ iterable: detectedApplications(service.userAgent, reported) });
}

export async function applicationsExternalRelated({ service }: OperationContext) {
  const reported = await service.storage.listExternalApplications();
  return reply({ iterable: relatedApplications(detectedApplications(service.userAgent, reported)) });
}

export async function applicationsSessionOpen(context: OperationContext) {
  const application = await scope(context);
  const session = { id: context.service.clock.newId(), opened: { value: now(context) }, ...(application ? { application } : {}) };
  await context.service.storage.putSession(session);
  return sessionResponse(context, session.id);
}

export async function applicationsSessionClose(context: OperationContext) {
  const { request, service } = context;
  const body = await readJson(request, service.maxBodyBytes);
  if (body === undefined) throw badRequest('The request body must be the session id as a JSON string, e.g. "\\"<uuid>\\"".');
  const id = uuid(body, 'The session id (the JSON string body)');
  const closed = await service.storage.closeSession(id, { value: now(context) });
  if (!closed) throw notFound(`No session with id ${id}.`);
  return sessionResponse(context, id);
}

export async function applicationsSessionSnapshot(context: OperationContext) {
  return sessionResponse(context, uuid(context.params.session, 'The session id'));
}

async function sessionResponse({ service }: OperationContext, id: string) {
  const found = await service.storage.getSession(id);
  if (!found) throw notFound(`No session with id ${id}.`);
  const { application: _application, ...session } = found.session;
  return reply({ ...session, engagement: found.engagement });
}

/** Reads an event body and stores it; returns the body for the echo. */
async function recordEvent(context: OperationContext, kind: EventKind, parse: (body: JsonObject, path: string) => ApplicationRecord[]) {
  const { request, service } = context;
  const path = 'event';
  const body = object(await readJson(request, service.maxBodyBytes), path);
  optional(body, 'schema', path, embeddedSchema);
  const upsert = parse(body, path);
  const application = await scope(context, upsert);
  const changes = await service.storage.recordEvent(
    { id: service.clock.newId(), kind, at: now(context), payload: body, ...(application ? { application } : {}) },
    upsert,
  );
  publish(context, changes);
  return body;
}

function identifierDescriptionPair(body: JsonObject, path: string) {
  const pair = optional(body, 'identifier_description_pair', path, object);
  if (pair) optional(pair, 'assets_list_refreshed', `${path}.identifier_description_pair`, string);
  return pair;
}

export async function applicationsUsageEngagementInteraction(context: OperationContext) {
  const body = await recordEvent(context, 'interaction', (b, p) => {
    required(b, 'description', p, string);
    optional(b, 'element', p, string);
    identifierDescriptionPair(b, p);
    return [];
  });
  // The Tracked form echoes the event; the identifier/description pair is stored, not echoed (TrackedInteractionEvent has none).
  const { description, element, schema } = body;
  return reply(defined({ schema, description, element }));
}

export async function applicationsUsageEngagementKeyboard(context: OperationContext) {
  const body = await recordEvent(context, 'keyboard', (b, p) => {
    required(b, 'description', p, string);
    required(b, 'shortcut', p, integerArray);
    identifierDescriptionPair(b, p);
    return [];
  });
  const { description, shortcut, schema } = body;
  return reply(defined({ schema, description, shortcut }));
}

export async function applicationsUsageInstallation(context: OperationContext) {
  await recordEvent(context, 'installation', (b, p) => {
    optional(b, 'user', p, object);
    return [required(b, 'application', p, parseApplication)];
  });
  return reply();
}

export async function postApplicationsUsageUpdated(context: OperationContext) {
  await recordEvent(context, 'update', (b, p) => {
    optional(b, 'user', p, object);
    optional(b, 'previous', p, parseApplication);
    return [required(b, 'current', p, parseApplication)];
  });
  return reply();
}
