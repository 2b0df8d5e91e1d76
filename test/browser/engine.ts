/**
 * The engine of the running vitest project (PIECES_BROWSER: chromium, firefox
 * or webkit; Chromium unless told). Browser tests import `launch`, the page
 * types and `need` from here, never from an engine's module.
 */
import type { TestContext } from 'vitest';
import type { BrowserContext, Capability, Engine, EngineName, LaunchOptions } from './driver.js';

export type { BrowserContext, ConsoleEntry, LaunchOptions, Page } from './driver.js';

const engines: Record<EngineName, () => Promise<{ engine: Engine }>> = {
  chromium: () => import('./chromium.js'),
  firefox: () => import('./firefox.js'),
  webkit: () => import('./webkit.js'),
};

const name = (process.env.PIECES_BROWSER ?? 'chromium') as EngineName;
if (!(name in engines)) throw new Error(`PIECES_BROWSER must be one of ${Object.keys(engines).join(', ')}, not ${name}.`);

export const engine: Engine = (await engines[name]()).engine;

/** Starts the engine's browser on `profile` (a new folder unless given). */
export async function launch(profile?: string, options?: LaunchOptions): Promise<{ context: BrowserContext; profile: string }> {
  const context = await engine.launch(profile, options);
  return { context, profile: context.profile };
}

/** Skips the running test, saying why, where the engine cannot do `capability`. */
export function need(test: TestContext, capability: Capability): void {
  const reason = engine.lacks(capability);
  if (reason) test.skip(`${engine.name} cannot ${capability}: ${reason}`);
}
