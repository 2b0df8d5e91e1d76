/** Application: validation of what clients send, and the browser's own application. */
import { ApplicationNameEnum, CapabilitiesEnum, MechanismEnum, PlatformEnum, PrivacyEnum, type ApplicationName } from '../enums.js';
import type { ApplicationRecord } from '../../storage/schema.js';
import type { Engagement } from '../../storage/storage.js';
import {
  boolean,
  defined,
  embeddedSchema,
  knownKeys,
  number,
  object,
  oneOf,
  optional,
  required,
  string,
  uuid,
  type Json,
} from '../validate.js';

const APPLICATION_FIELDS = [
  'schema',
  'id',
  'name',
  'version',
  'platform',
  'onboarded',
  'privacy',
  'capabilities',
  'mechanism',
  'automaticUnload',
  'enrichment',
] as const;
const ENRICHMENT_FIELDS = ['schema', 'tags', 'websites', 'persons', 'hints'] as const;

/** Validates an Application body: every field the SDK's Application has, and no other. */
export function parseApplication(value: unknown, path = 'application'): ApplicationRecord {
  // engagement is what this service adds to the Applications it answers (see applicationWire), counted from
  // the events: an Application sent back as it was answered is taken, its engagement ignored.
  const { engagement: _engagement, ...body } = object(value, path);
  knownKeys(body, APPLICATION_FIELDS, path, 'Application');
  return defined({
    schema: optional(body, 'schema', path, embeddedSchema),
    id: required(body, 'id', path, uuid),
    name: required(body, 'name', path, (v, p) => oneOf(v, ApplicationNameEnum, p)),
    version: required(body, 'version', path, string),
    platform: required(body, 'platform', path, (v, p) => oneOf(v, PlatformEnum, p)),
    onboarded: required(body, 'onboarded', path, boolean),
    privacy: required(body, 'privacy', path, (v, p) => oneOf(v, PrivacyEnum, p)),
    capabilities: optional(body, 'capabilities', path, (v, p) => oneOf(v, CapabilitiesEnum, p)),
    mechanism: optional(body, 'mechanism', path, (v, p) => oneOf(v, MechanismEnum, p)),
    automaticUnload: optional(body, 'automaticUnload', path, boolean),
    enrichment: optional(body, 'enrichment', path, parseEnrichment),
  });
}

/** A SeededAssetEnrichment: counts of tags, websites, persons and hints to generate. */
function parseEnrichment(value: unknown, path: string) {
  const body = object(value, path);
  knownKeys(body, ENRICHMENT_FIELDS, path, 'SeededAssetEnrichment');
  return defined({
    schema: optional(body, 'schema', path, embeddedSchema),
    tags: optional(body, 'tags', path, number),
    websites: optional(body, 'websites', path, number),
    persons: optional(body, 'persons', path, number),
    hints: optional(body, 'hints', path, number),
  });
}

/** The wire Application: the stored record plus its engagement (ignored by the SDK, kept for clients that want it). */
export function applicationWire(application: ApplicationRecord, engagement: Engagement) {
  return { ...application, engagement: engagement as unknown as Json };
}

export interface BrowserInfo {
  /** Human name, e.g. "Google Chrome". */
  name: string;
  version: string;
  /** The closest ApplicationNameEnum value. */
  application: ApplicationName;
}

/** Identifies the browser from its user agent string. */
export function detectBrowser(userAgent: string): BrowserInfo {
  const rules: Array<[RegExp, string, ApplicationName]> = [
    [/Edg(?:e|A|iOS)?\/([\d.]+)/, 'Microsoft Edge', 'MICROSOFT_EDGE'],
    [/OPR\/([\d.]+)/, 'Opera', 'OPERA'],
    [/Brave\/([\d.]+)/, 'Brave', 'BRAVE'],
    [/Firefox\/([\d.]+)/, 'Firefox', 'FIREFOX_ADDON_MV3'],
    [/HeadlessChrome\/([\d.]+)/, 'Chromium (headless)', 'GOOGLE_CHROME_EXTENSION_MV3'],
    [/Chromium\/([\d.]+)/, 'Chromium', 'GOOGLE_CHROME_EXTENSION_MV3'],
    [/Chrome\/([\d.]+)/, 'Google Chrome', 'GOOGLE_CHROME_EXTENSION_MV3'],
    [/Version\/([\d.]+).*Safari\//, 'Safari', 'SAFARI_EXTENSION_MV3'],
  ];
  for (const [pattern, name, application] of rules) {
    const match = pattern.exec(userAgent);
    if (match) return { name, version: match[1]!, application };
  }
  return { name: 'Web browser', version: 'unknown', application: 'UNKNOWN' };
}

/** The application registered by a body-less `register`: the calling browser, on platform WEB. */
export function browserApplication(id: string, userAgent: string): ApplicationRecord {
  const browser = detectBrowser(userAgent);
  return {
    id,
    name: browser.application,
    version: browser.version,
    platform: 'WEB',
    onboarded: true,
    privacy: 'OPEN',
    capabilities: 'LOCAL',
    mechanism: 'MANUAL',
  };
}
