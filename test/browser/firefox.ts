/**
 * Firefox ESR (Debian's firefox-esr, or FIREFOX_PATH), headless, driven by
 * puppeteer-core over WebDriver BiDi. What BiDi cannot do (stop a service
 * worker, a reload that bypasses it, going offline) is done by script in the
 * browser's own chrome scope, which --remote-allow-system-access opens to BiDi.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type BrowserContext as PpContext, type Page as PpPage } from 'puppeteer-core';
import { afterAll } from 'vitest';
import { ScriptedPage, Unsupported, type BrowserContext, type Engine, type LaunchOptions, type Page } from './driver.js';

export function firefoxPath(): string {
  const path = process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr';
  if (!existsSync(path)) {
    throw new Error(`No Firefox at ${path}: install Debian's firefox-esr (apt-get install -y firefox-esr) or set FIREFOX_PATH.`);
  }
  return path;
}

class FirefoxPage extends ScriptedPage {
  constructor(readonly raw: PpPage) {
    super();
    raw.on('console', (message) =>
      this.console.push({ type: message.type() === 'warn' ? 'warning' : message.type(), text: message.text() }),
    );
    raw.on('pageerror', (error) => this.console.push({ type: 'pageerror', text: (error as Error).message }));
  }

  /** The WebDriver BiDi id of the page's browsing context. */
  get contextId(): string {
    return (this.raw.mainFrame() as unknown as { _id: string })._id;
  }

  async goto(url: string) {
    await this.raw.goto(url, { waitUntil: 'load' });
  }
  protected run<A, R>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R> {
    return this.raw.evaluate(fn as never, arg) as Promise<R>;
  }
  /**
   * A click as a user's (pointer input at the element's centre, once it is
   * visible, enabled and still), not HTMLElement.click() from a script: the
   * focus moves to the button, and the page runs its microtasks between the
   * listeners, as with Playwright's click in Chromium.
   */
  override async click(selector: string) {
    await this.raw.locator(selector).setTimeout(30_000).click();
  }
  async reload() {
    await this.raw.reload({ waitUntil: 'load' });
  }
  async screenshot(path: string) {
    await this.raw.screenshot({ path, fullPage: true });
  }
  close() {
    return this.raw.close();
  }
}

interface BidiConnection {
  send(method: string, params: object): Promise<{ result: Record<string, unknown> }>;
}

class FirefoxContext implements BrowserContext {
  private blank: PpPage | undefined;
  private offline = false;

  /** `shared`: a user context of its own in the shared browser; else the browser is its own, on `profile`. */
  constructor(
    private readonly browser: Browser,
    readonly profile: string,
    blank: PpPage | undefined,
    private readonly shared?: PpContext,
  ) {
    this.blank = blank;
  }

  async newPage(): Promise<Page> {
    // The browser starts with one blank tab: the first page is that one, the others are windows.
    const raw = this.blank ?? (await (this.shared ?? this.browser).newPage({ type: 'window' }));
    this.blank = undefined;
    return new FirefoxPage(raw);
  }

  async close() {
    if (!this.shared) return this.browser.close();
    // Its windows closed and its data gone with it; the network, the browser's, as it was.
    if (this.offline) await this.setOffline(false);
    await this.shared.close();
  }

  /** Evaluates `expression` in the browser's chrome scope (privileged, parent process). */
  private async chrome(expression: string): Promise<unknown> {
    const connection = (this.browser as unknown as { connection: BidiConnection }).connection;
    const tree = await connection.send('browsingContext.getTree', { 'moz:scope': 'chrome' });
    const [window] = tree.result.contexts as Array<{ context: string }>;
    const { result } = await connection.send('script.evaluate', {
      expression,
      target: { context: window!.context },
      awaitPromise: true,
    });
    if (result.type === 'exception') throw new Error(`chrome script failed: ${JSON.stringify(result.exceptionDetails)}`);
    return (result.result as { value?: unknown }).value;
  }

  async stopWorkers() {
    await this.chrome(`(() => {
      const manager = Cc['@mozilla.org/serviceworkers/manager;1'].getService(Ci.nsIServiceWorkerManager);
      const registrations = manager.getAllRegistrations();
      for (let i = 0; i < registrations.length; i++) {
        const registration = registrations.queryElementAt(i, Ci.nsIServiceWorkerRegistrationInfo);
        for (const worker of [registration.activeWorker, registration.waitingWorker, registration.installingWorker]) worker?.terminateWorker();
      }
    })()`);
  }

  async hardReload(page: Page) {
    const firefox = page as FirefoxPage;
    // Marks the document so that the wait below sees the new one.
    await firefox.evaluate(() => ((window as { beforeHardReload?: true }).beforeHardReload = true));
    await this.chrome(`(() => {
      const { NavigableManager } = ChromeUtils.importESModule('chrome://remote/content/shared/NavigableManager.sys.mjs');
      NavigableManager.getBrowsingContextById(${JSON.stringify(firefox.contextId)}).reload(Ci.nsIWebNavigation.LOAD_FLAGS_BYPASS_CACHE);
    })()`);
    await firefox.waitForFunction(() => !(window as { beforeHardReload?: true }).beforeHardReload && document.readyState === 'complete');
  }

  async setOffline(offline: boolean) {
    await this.chrome(`Services.io.manageOfflineStatus = false; Services.io.offline = ${offline};`);
    this.offline = offline;
  }

  workerHeap(): Promise<number> {
    throw new Unsupported('firefox', 'workerHeap', WORKER_HEAP);
  }
}

const WORKER_HEAP =
  "neither WebDriver BiDi nor Firefox's chrome scripts read one service worker's JavaScript heap (memory is reported per process)";

/**
 * The browser the launches with no profile and no launch option share (Firefox takes 3 to 10 s to
 * start, most of it in WebDriver BiDi's session.new): each such launch is a user context of its
 * own there (storage, service workers, caches and permissions apart), removed on close.
 */
let shared: Promise<{ browser: Browser; profile: string }> | undefined;
afterAll(async () => {
  const running = shared;
  shared = undefined;
  await (await running?.catch(() => undefined))?.browser.close();
});

async function start(profile: string, options: LaunchOptions) {
  const prefs: Record<string, unknown> = {};
  // Listed host names resolve as localhost does.
  if (options.loopbackHosts) prefs['network.dns.localDomains'] = options.loopbackHosts.join(',');
  if (options.blockServiceWorkers) prefs['dom.serviceWorkers.enabled'] = false;
  // 2: block every cookie and site data; 1: block third-party ones.
  if (options.siteData) prefs['network.cookie.cookieBehavior'] = options.siteData === 'blocked' ? 2 : 1;
  const browser = await puppeteer.launch({
    extraPrefsFirefox: prefs,
    browser: 'firefox',
    executablePath: firefoxPath(),
    headless: true,
    userDataDir: profile,
    // The very first start on a new machine takes about 25 s.
    timeout: 90_000,
    protocolTimeout: 300_000,
    args: ['--remote-allow-system-access'],
  });
  return { browser, profile };
}

const newProfile = () => mkdtempSync(join(tmpdir(), 'pieces-firefox-'));

export const engine: Engine = {
  name: 'firefox',
  async launch(profile, options = {}) {
    if (profile === undefined && Object.values(options).every((option) => option === undefined)) {
      shared ??= start(newProfile(), {});
      const running = await shared;
      return new FirefoxContext(running.browser, running.profile, undefined, await running.browser.createBrowserContext());
    }
    const own = await start(profile ?? newProfile(), options);
    const [blank] = await own.browser.pages();
    return new FirefoxContext(own.browser, own.profile, blank);
  },
  lacks: (capability) =>
    capability === 'workerHeap'
      ? WORKER_HEAP
      : capability === 'killWorkers'
        ? "Firefox's terminateWorker waits for the fetch events in flight (a stop after 22 of 200 creates still saw all 200 acknowledged), and the worker shares its content process with the page"
        : capability === 'localNetworkAccess'
          ? 'Firefox ESR has no Local Network Access permission to refuse (a public page reaches localhost)'
          : undefined,
};
