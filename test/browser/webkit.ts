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
 * its data in the profile folder, driven through WebKitWebDriver as MiniBrowser is.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

class WebKitContext implements BrowserContext {
  private queue: Promise<unknown> = Promise.resolve();
  private current: string | undefined;
  private first: string | undefined;

  constructor(
    private readonly driver: WebDriver,
    private readonly processes: ChildProcess[],
    readonly profile: string,
    first: string,
  ) {
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

  // What WebKit cannot do (see LACKS).
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

export const engine: Engine = {
  name: 'webkit',
  async launch(given, options) {
    const profile = given ?? mkdtempSync(join(tmpdir(), 'pieces-webkit-'));
    // MiniBrowser's automation storage is throwaway: a browser started again on a profile is the small one that keeps it.
    const restartable = given !== undefined || options?.restartable;
    if (restartable) check(PYTHON, 'python3 with python3-gi and gir1.2-webkit2-4.1');
    else check(MINIBROWSER, 'MiniBrowser');
    check('/usr/bin/WebKitWebDriver', 'WebKitWebDriver');
    const xvfb = await startXvfb();
    const port = await freePort();
    const webDriver = spawn('WebKitWebDriver', [`--port=${port}`, '--replace-on-new-session'], {
      env: { ...process.env, DISPLAY: xvfb.display },
      stdio: 'ignore',
    });
    const processes = [webDriver, xvfb.process];
    try {
      const driver = await connect(
        port,
        restartable
          ? {
              name: 'webkit-profile-browser',
              binary: PYTHON,
              args: [join(import.meta.dirname, 'webkit-profile-browser.py'), profile, '--automation'],
            }
          : { name: 'MiniBrowser', binary: MINIBROWSER, args: ['--automation'] },
      );
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
async function connect(port: number, browser: { name: string; binary: string; args: string[] }): Promise<WebDriver> {
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
      browserName: browser.name,
      'webkitgtk:browserOptions': { binary: browser.binary, args: browser.args },
    })
    .build();
}
