/** Detected and related external applications. */
import type { ExternalApplicationRecord } from '../../storage/schema.js';
import { detectBrowser } from './application.js';

/** Applications Pieces integrates with; "related" lists those not detected. */
export const INTEGRATIONS_CATALOGUE = [
  'Visual Studio Code',
  'JetBrains IDEs',
  'Visual Studio',
  'Sublime Text',
  'Neovim',
  'JupyterLab',
  'Azure Data Studio',
  'Obsidian',
  'Microsoft Teams',
  'Raycast',
  'Google Chrome',
  'Microsoft Edge',
  'Firefox',
  'Brave',
  'Opera',
  'Safari',
] as const;

/** The browser itself, then what pages reported, without duplicates by name. */
export function detectedApplications(userAgent: string, reported: ExternalApplicationRecord[]) {
  const browser = detectBrowser(userAgent);
  const detected: ExternalApplicationRecord[] = [{ name: browser.name, version: browser.version }];
  for (const application of reported) {
    if (!detected.some((d) => d.name === application.name)) detected.push(application);
  }
  return detected;
}

/** Detected applications plus the catalogue's integrable applications that are not installed (no version). */
export function relatedApplications(detected: ExternalApplicationRecord[]) {
  const names = new Set(detected.map((d) => d.name.toLowerCase()));
  return [...detected, ...INTEGRATIONS_CATALOGUE.filter((name) => !names.has(name.toLowerCase())).map((name) => ({ name }))];
}
