/** Application: validation of what clients send, and the browser's own application. */
import {
  ApplicationNameEnum,
  CapabilitiesEnum,
  MechanismEnum,
  PlatformEnum,
  PrivacyEnum,
  type ApplicationName,
} from '../enums.js';
import type { ApplicationRecord } from '../../storage/schema.js';
import type { Engagement } from '../../storage/storage.js';
import { boolean, object, oneOf, optional, required, string, uuid, type Json } from '../validate.js';

/** Validates an Application body; unknown fields are kept as sent. */
export function parseApplication(value: unknown, path = 'application'): ApplicationRecord {
  const body = object(value, path);
  const application: ApplicationRecord = {
    ...body,
    id: required(body, 'id', path, uuid),
    name: required(body, 'name', path, (v, p) => oneOf(v, ApplicationNameEnum, p)),
    version: required(body, 'version', path, string),
    platform: required(body, 'platform', path, (v, p) => oneOf(v, PlatformEnum, p)),
    onboarded: required(body, 'onboarded', path, boolean),
    privacy: required(body, 'privacy', path, (v, p) => oneOf(v, PrivacyEnum, p)),
  };
  optional(body, 'capabilities', path, (v, p) => oneOf(v, CapabilitiesEnum, p));
  optional(body, 'mechanism', path, (v, p) => oneOf(v, MechanismEnum, p));
  optional(body, 'automaticUnload', path, boolean);
  optional(body, 'schema', path, object);
  optional(body, 'enrichment', path, object);
  return application;
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
