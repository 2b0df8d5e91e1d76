/** Launches Debian's Chromium (or CHROME_PATH) headless with playwright-core. */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

export function chromiumPath(): string {
  const path = process.env.CHROME_PATH ?? '/usr/bin/chromium';
  if (!existsSync(path)) {
    throw new Error(`No Chromium at ${path}: install Debian's chromium (apt-get install -y chromium) or set CHROME_PATH.`);
  }
  return path;
}

export interface LaunchOptions {
  /** More Chromium switches. */
  args?: string[];
  /** Playwright's switch that makes service worker registration a no-op. */
  serviceWorkers?: 'allow' | 'block';
  /** Chromium profile preferences written before launch (e.g. content settings). */
  preferences?: Record<string, unknown>;
}

/**
 * A persistent context (a real profile folder), so that tests can close the
 * browser and start it again on the same profile.
 */
export async function launch(
  profile = mkdtempSync(join(tmpdir(), 'pieces-profile-')),
  options: LaunchOptions = {},
): Promise<{ context: BrowserContext; profile: string }> {
  if (options.preferences) {
    mkdirSync(join(profile, 'Default'), { recursive: true });
    writeFileSync(join(profile, 'Default', 'Preferences'), JSON.stringify(options.preferences));
  }
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    headless: true,
    args: [...CHROMIUM_ARGS, ...(options.args ?? [])],
    ...(options.serviceWorkers ? { serviceWorkers: options.serviceWorkers } : {}),
  });
  return { context, profile };
}

/** Stops every service worker of the context's browser (as the browser does when idle). */
export async function stopAllWorkers(context: BrowserContext): Promise<void> {
  const page = context.pages()[0] ?? (await context.newPage());
  const session = await context.newCDPSession(page);
  await session.send('ServiceWorker.enable');
  await session.send('ServiceWorker.stopAllWorkers');
  await session.detach();
}
