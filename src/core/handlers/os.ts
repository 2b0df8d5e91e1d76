/**
 * Handlers of OSApi (signing the local user in and out, launching an applet, the OS settings,
 * permissions, device information and metadata) and the
 * WorkstreamPatternEngineApi vision status (as activate and deactivate left it: handlers/pattern-engine.ts).
 */
import type { OperationContext, ServiceContext } from '../context.js';
import { OSAppletEnum, type Platform } from '../enums.js';
import { badRequest, readJson, reply } from '../http.js';
import { boolean, embeddedSchema, knownKeys, object, oneOf, optional, required, type JsonObject } from '../validate.js';
import { OS_PERMISSIONS_KEY, OS_SETTINGS_KEY } from '../../storage/storage.js';
import { publish } from './common.js';
import { localUser } from './user.js';
import { currentVisionStatus, visionActive } from '../models/pattern-engine.js';

/**
 * The OS's stable id (the health socket's `ok:<id>`, connect's `os`, its own application entry):
 * the database's identity (a wiped database is another OS), or the id an older version kept.
 * Reading it writes nothing, so that a rejected request changes nothing.
 */
export const osId = async (service: ServiceContext) => (await service.storage.getMeta<string>('osId')) ?? service.storage.identity();

/**
 * The platform the user agent names (Windows, macOS, Linux), or undefined when it names none
 * (a Node host's user agent names no operating system).
 */
export function platformOf(userAgent: string): Platform | undefined {
  if (/Windows/i.test(userAgent)) return 'WINDOWS';
  if (/Mac OS X|Macintosh/i.test(userAgent)) return 'MACOS';
  if (/Linux|X11/i.test(userAgent)) return 'LINUX';
  return undefined;
}

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

/** workstreamPatternEngineProcessorsVisionStatus: off until activated (kept across restarts). */
export async function workstreamPatternEngineProcessorsVisionStatus({ service }: OperationContext) {
  return reply(await currentVisionStatus(service));
}

/** The OS settings this service keeps: the fields of OSServerSettings (its `schema` is not kept). */
interface OSSettings {
  autoboot: boolean;
}

/**
 * The settings of a database that never had one set: as Pieces OS has them. The SDK documents
 * the one default there is: "autoboot: ... default is false" (OSServerSettings.d.ts, 4.1.0).
 */
const DEFAULT_SETTINGS: OSSettings = { autoboot: false };

/** The settings kept, over the defaults (a field added later gets its default). */
const withDefaults = (kept: Partial<OSSettings> | undefined): OSSettings => ({ ...DEFAULT_SETTINGS, ...kept });

/** The OS settings as the settings socket and osSettingsSnapshot give them. */
export const osSettings = async (service: ServiceContext): Promise<OSSettings> =>
  withDefaults(await service.storage.getMeta<Partial<OSSettings>>(OS_SETTINGS_KEY));

/** osSettingsSnapshot: the settings kept (the defaults until one is updated). */
export async function osSettingsSnapshot({ service }: OperationContext) {
  return reply(await osSettings(service));
}

/**
 * osSettingsUpdate: an OSServerSettings; the fields it gives replace the kept ones (read and
 * written in one transaction, kept across restarts), the settings socket sends the result.
 * A field that is not OSServerSettings' or not of its type is refused, and nothing changes.
 */
export async function osSettingsUpdate(context: OperationContext) {
  const path = 'oSServerSettings';
  const body = await readJson(context.request, context.service.maxBodyBytes);
  if (body === undefined) throw badRequest(`The request body is required: send an OSServerSettings ({"autoboot":true}).`);
  const sent = object(body, path);
  knownKeys(sent, ['schema', 'autoboot'], path, 'OSServerSettings');
  optional(sent, 'schema', path, embeddedSchema);
  const autoboot = optional(sent, 'autoboot', path, boolean);
  const { value, changes } = await context.service.storage.updateLoggedMeta<Partial<OSSettings>>(
    OS_SETTINGS_KEY,
    (kept) => ({ ...withDefaults(kept), ...(autoboot === undefined ? {} : { autoboot }) }),
    'osSettings',
  );
  publish(context, changes);
  return reply(withDefaults(value));
}

/**
 * The OS permissions of the emulated vision processor (vision: screen recording for long-term
 * memory; accessibility: reading other applications' windows). It records what ingestion brings,
 * no screen, so what stands for the operating system's consent is the client's request: a
 * request grants the permissions it asks for, kept until the data is reset. While the processor
 * is activated it holds both. Nothing else grants them.
 */
type Granted = { vision?: true; accessibility?: true };
const PERMISSIONS = ['vision', 'accessibility'] as const;

const permissions = async (service: ServiceContext): Promise<JsonObject> => {
  const [active, granted] = await Promise.all([visionActive(service), service.storage.getMeta<Granted>(OS_PERMISSIONS_KEY)]);
  return { processing: { vision: active || granted?.vision === true, accessibility: active || granted?.accessibility === true } };
};

/** osPermissions: those granted by a request, and both while the vision processor is activated (see permissions). */
export async function osPermissions({ service }: OperationContext) {
  return reply(await permissions(service));
}

/**
 * osPermissionsRequest: an OSPermissions naming the permissions wanted (`true`); they are granted
 * (see permissions) and the permissions answered. A body that is not an OSPermissions is refused,
 * granting nothing.
 */
export async function osPermissionsRequest(context: OperationContext) {
  const path = 'oSPermissions';
  const body = await readJson(context.request, context.service.maxBodyBytes);
  if (body === undefined) throw badRequest(`The request body is required: send an OSPermissions ({"processing":{"vision":true}}).`);
  const sent = object(body, path);
  knownKeys(sent, ['schema', 'processing'], path, 'OSPermissions');
  optional(sent, 'schema', path, embeddedSchema);
  const processing = optional(sent, 'processing', path, object);
  const asked: Granted = {};
  if (processing) {
    const at = `${path}.processing`;
    knownKeys(processing, ['schema', 'vision', 'accessibility'], at, 'OSProcessingPermissions');
    optional(processing, 'schema', at, embeddedSchema);
    for (const name of PERMISSIONS) if (optional(processing, name, at, boolean) === true) asked[name] = true;
  }
  if (Object.keys(asked).length) {
    await context.service.storage.updateMeta<Granted>(OS_PERMISSIONS_KEY, (granted) => ({ ...granted, ...asked }));
  }
  return reply(await permissions(context.service));
}

/** The operating system's version as the user agent gives it (`Windows NT 10.0`, `Mac OS X 10_15_7`), if it does. */
function platformVersion(userAgent: string): string | undefined {
  const found = /Windows NT ([\d.]+)|Mac OS X ([\d_.]+)|Android ([\d.]+)/.exec(userAgent);
  const version = found?.[1] ?? found?.[2] ?? found?.[3];
  return version?.replaceAll('_', '.');
}

/**
 * osDeviceInformation: what the host knows of its device, from its user agent: `name`, the
 * platform it names (PlatformEnum's name: WINDOWS, MACOS, LINUX), and `version`, the operating
 * system's version where the user agent gives one. Each is left out when the user agent does
 * not say it (a Node host's). Neither `hardware` nor `dependencies` (whether Vulkan is present)
 * is known to a browser or Node host: left out (the model has them optional).
 */
export async function osDeviceInformation({ service }: OperationContext) {
  const name = platformOf(service.userAgent);
  const version = platformVersion(service.userAgent);
  return reply({ ...(name ? { name } : {}), ...(version ? { version } : {}) });
}

/**
 * osMetadata: the totals of the materials stored here, counted in the store (TrackedSummaryTotals, in its wire names). The totals the
 * model requires that this service keeps no count of (copilot sends, receives and sessions,
 * searches, references, reuses, ISR reports, the productivity score) are 0, and so are shares
 * (this service stores none); its optional counters and status are left out but for the
 * workstream kinds it stores.
 */
export async function osMetadata({ service }: OperationContext) {
  const { storage } = service;
  const count = async (collection: Parameters<typeof storage.listIds>[0]) => (await storage.listIds(collection)).ids.length;
  const [assets, conversations, persons, sensitives, events, summaries, sources, anchors, records] = await Promise.all([
    count('asset'),
    count('conversation'),
    count('person'),
    count('sensitive'),
    count('workstreamEvent'),
    count('workstreamSummary'),
    count('workstreamPatternEngineSource'),
    storage.listAnchors(),
    storage.countRecords(),
  ]);
  const anchorTypes = anchors.map((anchor) => (JSON.parse(anchor.json) as { type?: string }).type);
  return reply({
    totals: {
      assets,
      tags: records.tags,
      websites: records.websites,
      persons,
      sensitives,
      shares: 0,
      copilot_sends: 0,
      copilot_receives: 0,
      copilot_sessions: 0,
      copilot_conversations: conversations,
      productivity_score: 0,
      searches: 0,
      references: 0,
      reuses: 0,
      anchor_files: anchorTypes.filter((type) => type === 'FILE').length,
      anchor_folders: anchorTypes.filter((type) => type === 'DIRECTORY').length,
      isr_reports: 0,
      workstream_events: events,
      workstream_summaries: summaries,
      workstream_pattern_engine_sources: sources,
    },
  });
}
