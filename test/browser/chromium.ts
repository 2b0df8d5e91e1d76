/** Chromium (Debian's, or CHROME_PATH), headless, driven by playwright-core over CDP. */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext as PwContext, type CDPSession, type Page as PwPage } from 'playwright-core';
import { afterAll } from 'vitest';
import type { BrowserContext, ConsoleEntry, Engine, LaunchOptions, Page, WaitOptions } from './driver.js';

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

class ChromiumPage implements Page {
  readonly console: ConsoleEntry[] = [];

  constructor(readonly raw: PwPage) {
    raw.on('console', (message) => this.console.push({ type: message.type(), text: message.text() }));
    raw.on('pageerror', (error) => this.console.push({ type: 'pageerror', text: error.message }));
  }

  async goto(url: string) {
    await this.raw.goto(url);
  }
  evaluate<R>(fn: () => R | Promise<R>): Promise<R>;
  evaluate<R, A>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R>;
  evaluate<R, A>(fn: (arg: A) => R | Promise<R>, arg?: A): Promise<R> {
    return this.raw.evaluate<R, A>(fn as never, arg as A);
  }
  waitForFunction(fn: () => unknown, arg?: undefined, options?: WaitOptions): Promise<void>;
  waitForFunction<A>(fn: (arg: A) => unknown, arg: A, options?: WaitOptions): Promise<void>;
  async waitForFunction<A>(fn: (arg: A) => unknown, arg?: A, options?: WaitOptions) {
    await this.raw.waitForFunction<unknown, A>(fn as never, arg as A, options);
  }
  async waitForSelector(selector: string, options?: WaitOptions) {
    await this.raw.waitForSelector(selector, options);
  }
  click(selector: string) {
    return this.raw.click(selector);
  }
  fill(selector: string, value: string) {
    return this.raw.fill(selector, value);
  }
  async selectOption(selector: string, option: string | { label: string }) {
    await this.raw.selectOption(selector, option);
  }
  textContent(selector: string) {
    return this.raw.textContent(selector);
  }
  getAttribute(selector: string, name: string) {
    return this.raw.getAttribute(selector, name);
  }
  inputValue(selector: string) {
    return this.raw.inputValue(selector);
  }
  async reload() {
    await this.raw.reload();
  }
  async screenshot(path: string) {
    await this.raw.screenshot({ path, fullPage: true });
  }
  close() {
    return this.raw.close();
  }
}

class ChromiumContext implements BrowserContext {
  private readonly pages = new Map<Page, PwPage>();

  constructor(
    private readonly raw: PwContext,
    readonly profile: string,
  ) {}

  async newPage(): Promise<Page> {
    // A persistent context starts with one blank tab: the first page is that one.
    const blank = this.raw.pages().find((p) => p.url() === 'about:blank' && ![...this.pages.values()].includes(p));
    const raw = blank ?? (await this.raw.newPage());
    const page = new ChromiumPage(raw);
    this.pages.set(page, raw);
    return page;
  }

  close() {
    return this.raw.close();
  }

  stopWorkers() {
    return stopAllWorkers(this.raw);
  }

  async hardReload(page: Page) {
    // Page.reload with ignoreCache is Shift+Reload.
    const raw = (page as ChromiumPage).raw;
    const cdp = await this.raw.newCDPSession(raw);
    const loaded = raw.waitForEvent('load');
    await cdp.send('Page.reload', { ignoreCache: true });
    await loaded;
    await cdp.detach();
  }

  setOffline(offline: boolean) {
    return this.raw.setOffline(offline);
  }

  /** The session permissions are set through: an override lasts as long as the session that made it. */
  private permissions: Promise<CDPSession> | null = null;

  async setLocalNetwork(origin: string, setting: 'granted' | 'denied') {
    this.permissions ??= (async () => this.raw.newCDPSession(this.raw.pages()[0] ?? (await this.raw.newPage())))();
    // Chromium names the permission for loopback addresses `loopback-network` (Local Network Access).
    await (await this.permissions).send('Browser.setPermission', { permission: { name: 'loopback-network' }, setting, origin });
  }

  workerHeap(page: Page) {
    return workerHeap(this.raw, (page as ChromiumPage).raw);
  }
}

/**
 * The heap of the running pieces-os-worker service worker after a garbage collection, in bytes,
 * over CDP (Runtime.getHeapUsage in the worker's target).
 */
export async function workerHeap(context: PwContext, page: PwPage): Promise<number> {
  const cdp = await context.newCDPSession(page);
  try {
    const { targetInfos } = await cdp.send('Target.getTargets');
    const worker = targetInfos.find(
      (t) => t.type === 'service_worker' && t.url.includes('pieces-os-worker') && !t.url.includes('groupCommit=0'),
    );
    if (!worker) throw new Error('no running pieces-os-worker');
    const { sessionId } = await cdp.send('Target.attachToTarget', { targetId: worker.targetId, flatten: false });
    const replies = new Map<number, (result: unknown) => void>();
    cdp.on('Target.receivedMessageFromTarget', (event) => {
      const message = JSON.parse(event.message) as { id?: number; result?: unknown };
      if (message.id !== undefined) replies.get(message.id)?.(message.result);
    });
    const send = (id: number, method: string) =>
      new Promise<unknown>((resolve) => {
        replies.set(id, resolve);
        void cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method }) });
      });
    await send(1, 'HeapProfiler.collectGarbage');
    const { usedSize } = (await send(2, 'Runtime.getHeapUsage')) as { usedSize: number };
    await cdp.send('Target.detachFromTarget', { sessionId });
    return usedSize;
  } finally {
    await cdp.detach();
  }
}

/**
 * Playwright's own persistent context (a real profile folder), for what needs
 * Chromium itself (the benchmark); tests use `engine`.
 */
export async function launchChromium(
  profile = mkdtempSync(join(tmpdir(), 'pieces-chromium-')),
  options: LaunchOptions = {},
): Promise<{ context: PwContext; profile: string }> {
  if (options.siteData) {
    // Content settings live in the profile's preferences.
    const preferences =
      options.siteData === 'blocked'
        ? { profile: { default_content_setting_values: { cookies: 2 } } }
        : { profile: { cookie_controls_mode: 1, block_third_party_cookies: true } };
    mkdirSync(join(profile, 'Default'), { recursive: true });
    writeFileSync(join(profile, 'Default', 'Preferences'), JSON.stringify(preferences));
  }
  const hosts = options.loopbackHosts?.map((host) => `MAP ${host} 127.0.0.1`).join(', ');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    headless: true,
    args: [
      ...CHROMIUM_ARGS,
      ...(hosts ? [`--host-resolver-rules=${hosts}`] : []),
      ...(options.publicPorts?.length
        ? [`--ip-address-space-overrides=${options.publicPorts.map((port) => `127.0.0.1:${port}=public`).join(',')}`]
        : []),
    ],
    ...(options.blockServiceWorkers ? { serviceWorkers: 'block' as const } : {}),
  });
  return { context, profile };
}

/** Stops every service worker of the context's browser (as the browser does when idle). */
export async function stopAllWorkers(context: PwContext): Promise<void> {
  const page = context.pages()[0] ?? (await context.newPage());
  const session = await context.newCDPSession(page);
  await session.send('ServiceWorker.enable');
  await session.send('ServiceWorker.stopAllWorkers');
  await session.detach();
}

/**
 * The browser the launches with no profile and no launch option share (a launch costs about 3 s
 * on a loaded machine): each such launch is a context of its own there, off the record (storage,
 * service workers, caches and permissions its own, in memory, gone on close). A test that restarts
 * the browser on its profile, or needs a flag, passes one and gets a persistent context of its own.
 */
let shared: Promise<Browser> | undefined;
afterAll(async () => {
  const running = shared;
  shared = undefined;
  await (await running?.catch(() => undefined))?.close();
});

async function sharedBrowser(): Promise<Browser> {
  const running = await shared?.catch(() => undefined);
  if (running?.isConnected()) return running;
  // Never started, failed to start, crashed or closed: a new one.
  const started = chromium.launch({ executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS });
  shared = started;
  const browser = await started;
  browser.on('disconnected', () => {
    if (shared === started) shared = undefined;
  });
  return browser;
}

export const engine: Engine = {
  name: 'chromium',
  async launch(profile?: string, options: LaunchOptions = {}) {
    if (profile === undefined && Object.values(options).every((option) => option === undefined)) {
      const context = await (await sharedBrowser()).newContext();
      return new ChromiumContext(context, '');
    }
    const launched = await launchChromium(profile, options);
    return new ChromiumContext(launched.context, launched.profile);
  },
  lacks: () => undefined,
};
