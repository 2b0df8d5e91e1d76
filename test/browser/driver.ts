/**
 * The browser driver layer: one small Playwright-like page API that every
 * browser test is written against, implemented once per engine
 * (chromium.ts over playwright-core, firefox.ts over puppeteer-core and
 * WebDriver BiDi, webkit.ts over selenium-webdriver and WebKitWebDriver).
 * engine.ts picks the engine of the running vitest project.
 */

export type EngineName = 'chromium' | 'firefox' | 'webkit';

/** A console message or an uncaught error of a page. `type` is `log`, `info`, `warning`, `error`, `debug` or `pageerror`. */
export interface ConsoleEntry {
  type: string;
  text: string;
}

export interface WaitOptions {
  /** Milliseconds; 30 s unless told. */
  timeout?: number;
}

/** A tab or window showing one document. Selectors are CSS; every selector method waits for its element first. */
export interface Page {
  /** Navigates and waits for the load event. */
  goto(url: string): Promise<void>;
  /** Runs `fn` in the page (it is serialised: it may only use `arg`); resolves with its JSON-serialisable result. */
  evaluate<R>(fn: () => R | Promise<R>): Promise<R>;
  evaluate<R, A>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R>;
  /** Polls `fn` in the page until it returns a truthy value. */
  waitForFunction(fn: () => unknown, arg?: undefined, options?: WaitOptions): Promise<void>;
  waitForFunction<A>(fn: (arg: A) => unknown, arg: A, options?: WaitOptions): Promise<void>;
  waitForSelector(selector: string, options?: WaitOptions): Promise<void>;
  /**
   * Clicks the element as a user does: pointer input at its centre once it is
   * visible and enabled, so the focus moves to it and the page's microtasks run
   * between its click listeners.
   */
  click(selector: string): Promise<void>;
  /** Sets the value of an input or textarea as typing would (input and change events). */
  fill(selector: string, value: string): Promise<void>;
  /** Chooses an option of a select by value, or by label. */
  selectOption(selector: string, option: string | { label: string }): Promise<void>;
  textContent(selector: string): Promise<string | null>;
  getAttribute(selector: string, name: string): Promise<string | null>;
  inputValue(selector: string): Promise<string>;
  /** Reloads (the ordinary way, through the service worker) and waits for the load event. */
  reload(): Promise<void>;
  screenshot(path: string): Promise<void>;
  close(): Promise<void>;
  /** Console messages and uncaught errors of the page, in order, since it opened (see Engine.lacks('console')). */
  readonly console: ConsoleEntry[];
}

/** What a test may need that not every engine can do; Engine.lacks says why not. */
export type Capability =
  /** context.stopWorkers(): stop the service workers, as the browser does when idle. */
  | 'stopWorkers'
  /** context.stopWorkers() stops a worker at once, abandoning the fetch events it is handling. */
  | 'killWorkers'
  /** context.hardReload(page): a reload that loads the page past the service worker (Shift+Reload). */
  | 'hardReload'
  /** launch(profile, { restartable: true }) again after context.close(): the data of the first run is there. */
  | 'restart'
  /** context.setOffline(true): the browser has no network. */
  | 'offline'
  /** page.console gets the page's console messages and uncaught errors. */
  | 'console'
  /** LaunchOptions.loopbackHosts: host names that resolve to 127.0.0.1 (a local server on an insecure origin). */
  | 'loopbackHosts'
  /** LaunchOptions.blockServiceWorkers: registration does nothing (Playwright's serviceWorkers: 'block'). */
  | 'blockServiceWorkers'
  /** LaunchOptions.siteData: cookies and site data blocked by the browser's settings. */
  | 'siteData'
  /** context.workerHeap(page): the service worker's JavaScript heap after a garbage collection. */
  | 'workerHeap'
  /**
   * LaunchOptions.publicPorts and context.setLocalNetwork(): pages of 127.0.0.1 on those ports
   * taken for public ones (Local Network Access applies), and the permission set as a user would.
   */
  | 'localNetworkAccess';

/** A browser running on one profile folder. */
export interface BrowserContext {
  /** The profile folder; empty for a context kept in memory (a shared browser's, never restarted). */
  readonly profile: string;
  /** A new page; a new window where the engine would not paint a background tab. */
  newPage(): Promise<Page>;
  /** Closes every page and the browser; the profile folder stays. */
  close(): Promise<void>;
  stopWorkers(): Promise<void>;
  hardReload(page: Page): Promise<void>;
  setOffline(offline: boolean): Promise<void>;
  /** The JavaScript heap of the pieces-os-worker service worker of `page`'s origin, in bytes, after a garbage collection. */
  workerHeap(page: Page): Promise<number>;
  /** Sets the Local Network Access permission of `origin` (see Capability 'localNetworkAccess'). */
  setLocalNetwork?(origin: string, setting: 'granted' | 'denied'): Promise<void>;
}

/** How a browser is started, beyond its profile (see the capabilities of the same names). */
export interface LaunchOptions {
  /** The test will start the browser again on this profile (launch(profile, { restartable: true })) and expects its data. */
  restartable?: boolean;
  loopbackHosts?: string[];
  blockServiceWorkers?: boolean;
  /** `'blocked'` for every site, `'third-party-blocked'` for third-party contexts only. */
  siteData?: 'blocked' | 'third-party-blocked';
  /** Ports of 127.0.0.1 whose pages are taken for public ones (capability 'localNetworkAccess'). */
  publicPorts?: number[];
}

export interface Engine {
  readonly name: EngineName;
  /** Starts the browser on `profile` (a new folder unless given). */
  launch(profile?: string, options?: LaunchOptions): Promise<BrowserContext>;
  /** Why the engine cannot do `capability`, or undefined when it can. */
  lacks(capability: Capability): string | undefined;
}

export class Unsupported extends Error {
  constructor(engine: EngineName, capability: Capability, reason: string) {
    super(`${engine} cannot ${capability}: ${reason}`);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type Fn<A, R> = (arg: A) => R | Promise<R>;

/**
 * The page API over an engine that only offers navigation and script
 * evaluation: waits poll in the page, element actions are DOM operations.
 */
export abstract class ScriptedPage implements Page {
  readonly console: ConsoleEntry[] = [];

  abstract goto(url: string): Promise<void>;
  abstract reload(): Promise<void>;
  abstract screenshot(path: string): Promise<void>;
  abstract close(): Promise<void>;
  protected abstract run<A, R>(fn: Fn<A, R>, arg: A): Promise<R>;

  evaluate<R>(fn: () => R | Promise<R>): Promise<R>;
  evaluate<R, A>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R>;
  evaluate<R, A>(fn: Fn<A, R>, arg?: A): Promise<R> {
    return this.run(fn, arg as A);
  }

  waitForFunction(fn: () => unknown, arg?: undefined, options?: WaitOptions): Promise<void>;
  waitForFunction<A>(fn: (arg: A) => unknown, arg: A, options?: WaitOptions): Promise<void>;
  async waitForFunction<A>(fn: (arg: A) => unknown, arg?: A, options: WaitOptions = {}): Promise<void> {
    const timeout = options.timeout ?? 30_000;
    const deadline = Date.now() + timeout;
    for (;;) {
      if (await this.run(fn, arg as A)) return;
      if (Date.now() > deadline) throw new Error(`Timed out after ${timeout} ms waiting for ${fn.toString().slice(0, 200)}`);
      await sleep(50);
    }
  }

  waitForSelector(selector: string, options?: WaitOptions): Promise<void> {
    return this.waitForFunction((s) => document.querySelector(s) !== null, selector, options);
  }

  /** Runs `fn` on the element `selector` finds, once there is one. */
  private async onElement<A, R>(selector: string, fn: string, arg?: A): Promise<R> {
    await this.waitForSelector(selector);
    return this.run(
      ([s, body, a]) => {
        const element = document.querySelector(s) as HTMLElement & HTMLInputElement & HTMLSelectElement;
        // The action is picked by name: the page's CSP allows no eval.
        const actions: Record<string, (e: typeof element, a: unknown) => unknown> = {
          click: (e) => e.click(),
          text: (e) => e.textContent,
          attribute: (e, name) => e.getAttribute(name as string),
          value: (e) => e.value,
          fill: (e, value) => {
            e.focus();
            // Through the prototype's setter: a framework that tracks the element's value (React) sees the change.
            Object.getOwnPropertyDescriptor(Object.getPrototypeOf(e), 'value')!.set!.call(e, value as string);
            e.dispatchEvent(new Event('input', { bubbles: true }));
            e.dispatchEvent(new Event('change', { bubbles: true }));
          },
          select: (e, option) => {
            const wanted = option as string | { label: string };
            const match = [...e.options].find((o) => (typeof wanted === 'string' ? o.value === wanted : o.label === wanted.label));
            if (!match) throw new Error(`no option ${JSON.stringify(wanted)}`);
            e.value = match.value;
            e.dispatchEvent(new Event('input', { bubbles: true }));
            e.dispatchEvent(new Event('change', { bubbles: true }));
          },
        };
        return (actions[body]!(element, a) ?? null) as R;
      },
      [selector, fn, arg] as [string, string, unknown],
    );
  }

  /** HTMLElement.click() from a script, for an engine with no input commands: see Page.click for what it lacks. */
  click(selector: string): Promise<void> {
    return this.onElement<never, void>(selector, 'click');
  }
  fill(selector: string, value: string): Promise<void> {
    return this.onElement(selector, 'fill', value);
  }
  selectOption(selector: string, option: string | { label: string }): Promise<void> {
    return this.onElement(selector, 'select', option);
  }
  textContent(selector: string): Promise<string | null> {
    return this.onElement(selector, 'text');
  }
  getAttribute(selector: string, name: string): Promise<string | null> {
    return this.onElement(selector, 'attribute', name);
  }
  inputValue(selector: string): Promise<string> {
    return this.onElement(selector, 'value');
  }
}
