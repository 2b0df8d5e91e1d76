/**
 * WebKitGTK's MiniBrowser (Debian's webkit2gtk-driver), driven by
 * selenium-webdriver through WebKitWebDriver. MiniBrowser has no headless
 * mode, so each browser runs on its own Xvfb display.
 *
 * WebDriver runs one command at a time per session, and every command acts on
 * the current window: each page is a window, commands are queued and switch
 * windows as needed, and `evaluate` starts the function in the page and then
 * polls for its outcome, so that a long evaluation in one page never blocks
 * the others.
 *
 * MiniBrowser's automation mode always uses throwaway storage, so a test that
 * restarts the browser on its profile runs in webkit-profile-browser.py, a
 * small WebKit2GTK browser (the same engine, through python3-gi) that keeps
 * its data in the profile folder.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Builder, By, type WebDriver } from 'selenium-webdriver';
import { ScriptedPage, sleep, Unsupported, type BrowserContext, type Capability, type Engine, type Page } from './driver.js';
import { freePort } from '../free-port.js';

const MINIBROWSER = process.env.MINIBROWSER_PATH ?? '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';
/** Debian's python3, the one python3-gi is for. */
const PYTHON = '/usr/bin/python3';

function check(path: string, what: string) {
  if (!existsSync(path))
    throw new Error(`No ${what} at ${path}: apt-get install -y webkit2gtk-driver xvfb xauth python3-gi gir1.2-webkit2-4.1`);
}

const LACKS: Partial<Record<Capability, string>> = {
  stopWorkers: 'WebDriver has no command to stop a service worker, and WebKitGTK none of its own',
  killWorkers: 'WebDriver has no command to stop a service worker, and WebKitGTK none of its own',
  hardReload:
    "WebKit's hard reload (reload from origin) still goes through the service worker, so there is no uncontrolled load to recover from",
  offline: 'WebDriver has no command to take WebKitGTK offline',
  workerHeap: "WebDriver has no command to read a service worker's heap",
  loopbackHosts: 'not implemented in the WebKit driver: MiniBrowser is started without a host-resolver setting',
  blockServiceWorkers: 'not implemented in the WebKit driver: MiniBrowser is started with service workers on',
  siteData: 'not implemented in the WebKit driver: MiniBrowser is started with its default cookie policy',
  localNetworkAccess: 'WebKitGTK has no Local Network Access permission to refuse (a public page reaches localhost)',
  console:
    'WebDriver classic has no console log command, and MiniBrowser does not apply --enable-write-console-messages-to-stdout to the pages it opens for automation',
};

/** Starts Xvfb on a free display; resolves with the display and the process. */
async function startXvfb(): Promise<{ display: string; process: ChildProcess }> {
  check('/usr/bin/Xvfb', 'Xvfb');
  const xvfb = spawn('Xvfb', ['-displayfd', '1', '-screen', '0', '1280x1024x24', '-nolisten', 'tcp'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const display = await new Promise<string>((resolve, reject) => {
    let out = '';
    xvfb.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(`:${out.trim()}`);
    });
    xvfb.on('exit', (code) => reject(new Error(`Xvfb exited with ${code}`)));
  });
  return { display, process: xvfb };
}

/** What neither WebKit browser can do (see LACKS). */
abstract class WebKitContextBase implements BrowserContext {
  abstract readonly profile: string;
  abstract newPage(): Promise<Page>;
  abstract close(): Promise<void>;
  stopWorkers(): Promise<void> {
    throw new Unsupported('webkit', 'stopWorkers', LACKS.stopWorkers!);
  }
  hardReload(): Promise<void> {
    throw new Unsupported('webkit', 'hardReload', LACKS.hardReload!);
  }
  setOffline(): Promise<void> {
    throw new Unsupported('webkit', 'offline', LACKS.offline!);
  }
  workerHeap(): Promise<number> {
    throw new Unsupported('webkit', 'workerHeap', LACKS.workerHeap!);
  }
}

class WebKitPage extends ScriptedPage {
  private static evaluations = 0;

  constructor(
    private readonly browser: WebKitContext,
    readonly handle: string,
  ) {
    super();
  }

  private on<T>(command: (driver: WebDriver) => Promise<T>): Promise<T> {
    return this.browser.on(this.handle, command);
  }

  async goto(url: string) {
    await this.on((driver) => driver.get(url));
  }

  protected async run<A, R>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R> {
    const id = `e${WebKitPage.evaluations++}`;
    // Starts the function; answers at once if it settles within 100 ms, else leaves its outcome in a slot to poll.
    let outcome = await this.on((driver) =>
      driver.executeAsyncScript<{ value?: string; error?: string } | null>(
        `const [arg, id, done] = arguments;
        const slots = (window.__driverResults ??= {});
        let answered = false;
        const settle = (result) => { if (answered) slots[id] = result; else { answered = true; done(result); } };
        Promise.resolve().then(() => (${fn.toString()})(arg)).then(
          (v) => settle({ value: JSON.stringify({ v }) }),
          (e) => settle({ error: String((e && e.stack) || e) }),
        );
        setTimeout(() => { if (!answered) { answered = true; done(null); } }, 100);`,
        arg === undefined ? null : arg,
        id,
      ),
    );
    while (!outcome) {
      await sleep(20);
      outcome = await this.on((driver) =>
        driver.executeScript<{ value?: string; error?: string } | null>(
          `const slots = window.__driverResults;
          if (!slots) throw new Error('the page navigated during evaluate');
          const result = slots[arguments[0]];
          delete slots[arguments[0]];
          return result ?? null;`,
          id,
        ),
      );
    }
    if (outcome.error !== undefined) throw new Error(`evaluate failed in the page: ${outcome.error}`);
    return (JSON.parse(outcome.value!) as { v: R }).v;
  }

  /**
   * A click as a user's (WebDriver's element click: pointer input at the
   * element's centre), not HTMLElement.click() from a script: the focus moves
   * to the button, and the page runs its microtasks between the listeners, as
   * with Playwright's click in Chromium. Waits first, as Playwright does, for
   * the element to be visible and enabled.
   */
  override async click(selector: string) {
    await this.waitForFunction((s) => {
      const element = document.querySelector<HTMLElement>(s);
      return !!element && element.getClientRects().length > 0 && !(element as HTMLButtonElement).disabled;
    }, selector);
    // The element found may be replaced before the click lands (a list drawn again): find it again,
    // as Playwright's click does with its locator.
    for (let attempt = 0; ; attempt++) {
      try {
        await this.on((driver) => driver.findElement(By.css(selector)).click());
        return;
      } catch (error) {
        if ((error as Error)?.name !== 'StaleElementReferenceError' || attempt >= 4) throw error;
      }
    }
  }

  async reload() {
    await this.on((driver) => driver.navigate().refresh());
  }

  async screenshot(path: string) {
    // WebKitWebDriver's snapshot now and then fails with an empty "unknown error" on a busy machine: try again.
    for (let attempt = 1; ; attempt++) {
      try {
        writeFileSync(path, Buffer.from(await this.on((driver) => driver.takeScreenshot()), 'base64'));
        return;
      } catch (error) {
        if (attempt === 3) throw error;
        await sleep(500);
      }
    }
  }

  async close() {
    await this.on((driver) => driver.close());
    this.browser.closed(this);
  }
}

class WebKitContext extends WebKitContextBase {
  private queue: Promise<unknown> = Promise.resolve();
  private current: string | undefined;
  private first: string | undefined;

  constructor(
    private readonly driver: WebDriver,
    private readonly processes: ChildProcess[],
    readonly profile: string,
    first: string,
  ) {
    super();
    this.first = this.current = first;
  }

  /** Runs `command` alone, with the window `handle` current (any window unless told). */
  on<T>(handle: string | undefined, command: (driver: WebDriver) => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      if (handle && this.current !== handle) {
        await this.driver.switchTo().window(handle);
        this.current = handle;
      }
      return command(this.driver);
    });
    this.queue = run.catch(() => {});
    return run;
  }

  closed(page: WebKitPage) {
    if (this.current === page.handle) this.current = undefined;
  }

  async newPage(): Promise<Page> {
    let handle = this.first;
    this.first = undefined;
    if (!handle) {
      // A window, not a tab: WebKitGTK never paints a background tab.
      handle = await this.on(undefined, async (driver) => {
        await driver.switchTo().newWindow('window');
        return driver.getWindowHandle();
      });
      this.current = handle;
    }
    return new WebKitPage(this, handle);
  }

  async close() {
    await this.queue;
    await this.driver.quit().catch(() => {});
    for (const child of this.processes) child.kill();
  }
}

/** webkit-profile-browser.py: one JSON command per line, one answer per command. */
class ProfileBrowser {
  private next = 0;
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  constructor(readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const { id, value, error } = JSON.parse(line) as { id: number; value?: unknown; error?: string };
      const waiter = this.waiting.get(id);
      this.waiting.delete(id);
      if (error !== undefined) waiter?.reject(new Error(error));
      else waiter?.resolve(value);
    });
    child.on('exit', (code) => {
      for (const waiter of this.waiting.values()) waiter.reject(new Error(`the WebKit2GTK browser exited with ${code}`));
      this.waiting.clear();
    });
  }

  send<T>(command: string, fields: object = {}): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.child.stdin!.write(`${JSON.stringify({ id, command, ...fields })}\n`);
    });
  }
}

class ProfilePage extends ScriptedPage {
  constructor(
    private readonly browser: ProfileBrowser,
    private readonly page: number,
  ) {
    super();
  }
  async goto(url: string) {
    await this.browser.send('goto', { page: this.page, url });
  }
  protected async run<A, R>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R> {
    // The browser awaits the returned promise; the function's result travels as JSON.
    const body = `return (async () => JSON.stringify({ v: await (${fn.toString()})(JSON.parse(arg)) }))();`;
    const json = await this.browser.send<string>('call', { page: this.page, body, arg: JSON.stringify(arg ?? null) });
    return (JSON.parse(json) as { v: R }).v;
  }
  async reload() {
    await this.browser.send('reload', { page: this.page });
  }
  async screenshot(path: string) {
    await this.browser.send('screenshot', { page: this.page, path });
  }
  async close() {
    await this.browser.send('close', { page: this.page });
  }
}

class ProfileContext extends WebKitContextBase {
  constructor(
    private readonly browser: ProfileBrowser,
    private readonly xvfb: ChildProcess,
    readonly profile: string,
  ) {
    super();
  }

  async newPage(): Promise<Page> {
    return new ProfilePage(this.browser, await this.browser.send<number>('open'));
  }

  async close() {
    const exited = new Promise((resolve) => this.browser.child.once('exit', resolve));
    await this.browser.send('quit').catch(() => {});
    await Promise.race([exited, sleep(5_000)]);
    this.browser.child.kill();
    this.xvfb.kill();
  }
}

async function launchProfileBrowser(profile: string): Promise<ProfileContext> {
  check(PYTHON, 'python3 with python3-gi and gir1.2-webkit2-4.1');
  const xvfb = await startXvfb();
  const child = spawn(PYTHON, [join(import.meta.dirname, 'webkit-profile-browser.py'), profile], {
    env: { ...process.env, DISPLAY: xvfb.display },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  return new ProfileContext(new ProfileBrowser(child), xvfb.process, profile);
}

export const engine: Engine = {
  name: 'webkit',
  async launch(given, options) {
    const profile = given ?? mkdtempSync(join(tmpdir(), 'pieces-webkit-'));
    if (given !== undefined || options?.restartable) return launchProfileBrowser(profile);
    check(MINIBROWSER, 'MiniBrowser');
    check('/usr/bin/WebKitWebDriver', 'WebKitWebDriver');
    const xvfb = await startXvfb();
    const port = await freePort();
    const webDriver = spawn('WebKitWebDriver', [`--port=${port}`, '--replace-on-new-session'], {
      env: { ...process.env, DISPLAY: xvfb.display },
      stdio: 'ignore',
    });
    const processes = [webDriver, xvfb.process];
    try {
      const driver = await connect(port);
      await driver.manage().setTimeouts({ script: 120_000, pageLoad: 60_000 });
      return new WebKitContext(driver, processes, profile, await driver.getWindowHandle());
    } catch (error) {
      for (const child of processes) child.kill();
      throw error;
    }
  },
  lacks: (capability) => LACKS[capability],
};

/** Opens a session once WebKitWebDriver listens. */
async function connect(port: number): Promise<WebDriver> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await fetch(`http://127.0.0.1:${port}/status`);
      break;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(100);
    }
  }
  return new Builder()
    .usingServer(`http://127.0.0.1:${port}`)
    .withCapabilities({
      browserName: 'MiniBrowser',
      'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation'] },
    })
    .build();
}
