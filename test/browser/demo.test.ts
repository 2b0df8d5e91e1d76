import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { ApplicationNameEnum, PlatformEnum } from '@pieces.app/pieces-os-client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { engine, launch, need, type BrowserContext, type Page } from './engine.js';
import { storeIds } from './pages.js';
import { piecesControls } from '../../src/node/page-controls.js';
import { startFakeOllama, type FakeOllama } from '../fake-ollama.js';

const ARTIFACTS = resolve(import.meta.dirname, '../../test-results');

declare global {
  interface Window {
    /** CSP violations and uncaught errors seen by the page since the test started watching it. */
    problems: string[];
  }
}

/** Opens the demo, recording CSP violations and errors from the page and, where the engine reports them, console errors. */
async function openWatchedDemo(context: BrowserContext) {
  const page = await context.newPage();
  await page.goto(inject('demoUrl'));
  await page.evaluate(() => {
    window.problems = [];
    document.addEventListener('securitypolicyviolation', (event) =>
      window.problems.push(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`),
    );
    window.addEventListener('error', (event) => window.problems.push(`error: ${event.message}`));
    window.addEventListener('unhandledrejection', (event) => window.problems.push(`unhandled rejection: ${event.reason}`));
  });
  await page.waitForSelector('#status[data-state="ready"]');
  await page.waitForSelector('#stream-state[data-state="open"]');
  const problems = async () => [
    ...(await page.evaluate(() => window.problems)),
    ...page.console.filter((m) => m.type === 'error' || m.type === 'pageerror').map((m) => `${m.type}: ${m.text}`),
  ];
  return { page, problems };
}

/** How many requests of an operation the demo's request log shows. */
const logged = (page: Page, operation: string) =>
  page.evaluate((name) => document.querySelectorAll(`#request-log li[data-operation="${name}"]`).length, operation);

/** True when the element is present and not hidden. */
const visible = (page: Page, selector: string) =>
  page.evaluate((s) => {
    const element = document.querySelector<HTMLElement>(s);
    return !!element && !element.hidden && element.getClientRects().length > 0;
  }, selector);

const listIds = (page: Page) =>
  page.evaluate(() => [...document.querySelectorAll<HTMLElement>('#conversation-list li')].map((li) => li.dataset.id!));

/** Waits until the demo's list shows exactly the store's conversations. */
async function listMatchesStore(page: Page) {
  await expect.poll(async () => JSON.stringify(await listIds(page)), { timeout: 10_000 }).toBe(JSON.stringify(await storeIds(page)));
}

/** How each engine's user agent is detected. */
const BROWSER_NAME = { chromium: /Chromium|Chrome/, firefox: /Firefox/, webkit: /Safari/ }[engine.name];

describe('the demo page', () => {
  let context: BrowserContext;
  let page: Page;
  let problems: () => Promise<string[]>;

  beforeAll(async () => {
    ({ context } = await launch());
    ({ page, problems } = await openWatchedDemo(context));
  });

  afterAll(async () => {
    await context?.close();
  });

  it('reads the conversations snapshot once on load, and once per change', async () => {
    await page.waitForSelector('body[data-loaded="true"]');
    expect(await logged(page, 'conversationsSnapshot')).toBe(1);
    await page.fill('#create-name', 'one read');
    await page.click('#create-conversation');
    await page.waitForFunction(() => [...document.querySelectorAll('#conversation-list .name')].some((n) => n.textContent === 'one read'));
    expect(await logged(page, 'conversationsSnapshot')).toBe(2);
  });

  it('creates a conversation with a seed message; the name renders as text, never HTML', async () => {
    const name = 'Ideas <img src=x onerror="window.pwned=1">';
    await page.fill('#create-name', name);
    await page.fill('#create-message', 'How do I debounce a function?');
    await page.click('#create-conversation');
    await page.waitForFunction((n) => [...document.querySelectorAll('#conversation-list .name')].some((e) => e.textContent === n), name);
    await listMatchesStore(page);
    const id = await page.evaluate(
      (n) =>
        [...document.querySelectorAll<HTMLElement>('#conversation-list li')].find((li) => li.querySelector('.name')?.textContent === n)!
          .dataset.id!,
      name,
    );
    expect(await page.evaluate(() => document.querySelector('#conversation-list img'))).toBeNull();
    expect(await page.evaluate(() => (window as { pwned?: number }).pwned)).toBeUndefined();
    await page.click(`#conversation-list li[data-id="${id}"] .link`);
    await expect.poll(() => page.textContent('#conversation-detail')).toContain('[USER] How do I debounce a function?');
  });

  it('shows health and version in the header, as a client discovering Pieces OS reads them', async () => {
    expect(await page.textContent('#health')).toMatch(/^Pieces OS \d+\.\d+\.\d+ · health ok$/);
    expect(await page.getAttribute('#health', 'data-state')).toBe('ready');
    expect(await logged(page, 'getWellKnownHealth')).toBe(1);
    expect(await logged(page, 'getWellKnownVersion')).toBe(1);
  });

  it('opens a conversation with GET /conversation/{id}; adds, edits and deletes its messages; renames it', async () => {
    await page.fill('#create-name', 'to edit');
    await page.fill('#create-message', 'first question\nsecond line');
    await page.click('#create-conversation');
    await page.waitForFunction(() => [...document.querySelectorAll('#conversation-list .name')].some((n) => n.textContent === 'to edit'));
    const id = await page.evaluate(
      () =>
        [...document.querySelectorAll<HTMLElement>('#conversation-list li')].find(
          (li) => li.querySelector('.name')?.textContent === 'to edit',
        )!.dataset.id!,
    );
    const reads = await logged(page, 'conversationGetSpecificConversation');
    await page.click(`#conversation-list li[data-id="${id}"] .link`);
    await page.waitForFunction(() => document.querySelector('#message-list li[data-role="USER"]')?.textContent?.includes('first question'));
    expect(await logged(page, 'conversationGetSpecificConversation')).toBe(reads + 1);
    expect(await page.textContent('#request-log li[data-operation="conversationGetSpecificConversation"] .path')).toBe(
      `/conversation/${id}`,
    );
    expect(await page.inputValue('#rename-name')).toBe('to edit');
    expect(await page.getAttribute(`#conversation-list li[data-id="${id}"]`, 'aria-current')).toBe('');
    const stored = () =>
      page.evaluate(async (c) => {
        const conversation = await (await fetch(`http://localhost:1000/conversation/${c}`)).json();
        return {
          name: conversation.name as string | undefined,
          texts: conversation.messages.iterable.map(
            (m: { reference: { role: string; fragment: { string: { raw: string } } } }) =>
              `${m.reference.role}: ${m.reference.fragment.string.raw}`,
          ),
          deleted: Object.values(conversation.messages.indices as Record<string, number>).filter((i) => i === -1).length,
        };
      }, id);

    // Add: an ASSISTANT answer; the pane shows it once the change comes back on the stream.
    await page.fill('#message-text', 'an answer <b>not bold</b>');
    await page.selectOption('#message-role', 'ASSISTANT');
    await page.click('#add-message');
    await page.waitForFunction(
      () => document.querySelector('#message-list li[data-role="ASSISTANT"] .text')?.textContent === 'an answer <b>not bold</b>',
    );
    expect(await page.evaluate(() => document.querySelector('#message-list b'))).toBeNull();
    expect(await stored()).toEqual({
      name: 'to edit',
      texts: ['USER: first question\nsecond line', 'ASSISTANT: an answer <b>not bold</b>'],
      deleted: 0,
    });

    // Edit the answer in place.
    await page.click('#message-list li[data-role="ASSISTANT"] .link');
    await page.fill('#message-list .edit', 'a better answer');
    await page.click('#message-list .edit-form button[type="submit"]');
    await page.waitForFunction(
      () => document.querySelector('#message-list li[data-role="ASSISTANT"] .text')?.textContent === 'a better answer',
    );
    expect((await stored()).texts).toEqual(['USER: first question\nsecond line', 'ASSISTANT: a better answer']);

    // Delete it: gone from the pane and the store, its index -1.
    await page.click('#message-list li[data-role="ASSISTANT"] .danger');
    await page.waitForFunction(() => !document.querySelector('#message-list li[data-role="ASSISTANT"]'));
    expect(await stored()).toEqual({ name: 'to edit', texts: ['USER: first question\nsecond line'], deleted: 1 });

    // Rename with a typed name, then from the messages.
    await page.fill('#rename-name', 'Renamed <i>here</i>');
    await page.click('#rename');
    await page.waitForFunction(
      (c) => document.querySelector(`#conversation-list li[data-id="${c}"] .name`)?.textContent === 'Renamed <i>here</i>',
      id,
    );
    expect((await stored()).name).toBe('Renamed <i>here</i>');
    await page.click('#auto-name');
    await page.waitForFunction(
      (c) => document.querySelector(`#conversation-list li[data-id="${c}"] .name`)?.textContent === 'first question',
      id,
    );
    expect(await page.inputValue('#rename-name')).toBe('first question');
    expect(await logged(page, 'conversationUpdate')).toBe(1);
    expect(await logged(page, 'conversationSpecificConversationRename')).toBe(1);
  });

  it('creates a conversation from a sample asset and shows its summary message', async () => {
    await page.selectOption('#asset-select', { label: 'retry.py' });
    await page.click('#create-from-asset');
    await expect.poll(() => page.textContent('#conversation-detail')).toContain('[SYSTEM] Asset: retry.py');
    expect(await page.textContent('#conversation-detail')).toContain('Top-level declarations: class RetryError, def retry');
    await listMatchesStore(page);
    expect(await page.evaluate(() => [...document.querySelectorAll('#conversation-list li .name')].map((n) => n.textContent))).toContain(
      'retry.py',
    );
  });

  it('shows the bytes transferables=false saves, never a negative figure after deletes', async () => {
    await page.click('#transferables');
    await expect.poll(() => page.textContent('#transfer-size')).toMatch(/transferables=false saves .+ \(\d+%\)/);
    await page.click('#transferables');
    await expect.poll(() => page.textContent('#transfer-size')).toMatch(/^response .+ · transferables=false saves \d/);
    // Deleting the conversation with the most text: the sizes measured before no longer describe the same records.
    const ids = await storeIds(page);
    const fromAsset = await page.evaluate(
      () =>
        [...document.querySelectorAll<HTMLElement>('#conversation-list li')].find(
          (li) => li.querySelector('.name')?.textContent === 'retry.py',
        )!.dataset.id!,
    );
    await page.click(`#conversation-list li[data-id="${fromAsset}"] .danger`);
    await expect.poll(() => storeIds(page)).toEqual(ids.filter((id) => id !== fromAsset));
    await listMatchesStore(page);
    const label = (await page.textContent('#transfer-size'))!;
    expect(label).not.toContain('-');
    expect(label).toMatch(/^response \d/);
    await page.click('#transferables');
    await expect.poll(() => page.textContent('#transfer-size')).toMatch(/saves \d+(\.\d)? (B|KB) \((\d|[1-9]\d)%\)$/);
    await page.click('#transferables');
  });

  it('hides the detail pane when the conversation it shows is deleted', async () => {
    await page.fill('#create-name', 'shown then deleted');
    await page.fill('#create-message', 'bye');
    await page.click('#create-conversation');
    await page.waitForFunction(() =>
      [...document.querySelectorAll('#conversation-list .name')].some((n) => n.textContent === 'shown then deleted'),
    );
    const id = await page.evaluate(
      () =>
        [...document.querySelectorAll<HTMLElement>('#conversation-list li')].find(
          (li) => li.querySelector('.name')?.textContent === 'shown then deleted',
        )!.dataset.id!,
    );
    await page.click(`#conversation-list li[data-id="${id}"] .link`);
    await expect.poll(() => page.textContent('#conversation-detail')).toContain('[USER] bye');
    await page.click(`#conversation-list li[data-id="${id}"] .danger`);
    await page.waitForFunction(() => document.querySelector<HTMLElement>('#conversation-detail')!.hidden);
    await listMatchesStore(page);
  });

  it('deletes a conversation from the list and the store', async () => {
    const before = await storeIds(page);
    await page.click(`#conversation-list li[data-id="${before[0]}"] .danger`);
    await expect.poll(() => storeIds(page)).toEqual(before.slice(1));
    await listMatchesStore(page);
  });

  it('registers applications and sends events, with the engagement figures changing', async () => {
    await page.selectOption('#register-name', 'OBSIDIAN');
    await page.fill('#register-version', '1.5.0');
    await page.click('#register');
    await expect.poll(() => page.textContent('#application-list')).toContain('OBSIDIAN 1.5.0');
    const id = await page.inputValue('#event-application');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    // Listed, but not offered: the OS's own entry records no usage events.
    expect(await page.textContent('#application-list')).toContain('OS_SERVER');
    expect(await page.textContent('#event-application')).not.toContain('OS_SERVER');
    for (const event of ['interaction', 'keyboard', 'installation', 'update']) {
      await page.click(`[data-event="${event}"]`);
    }
    await expect
      .poll(() => page.textContent(`#application-list li[data-id="${id}"] .engagement`))
      .toMatch(/^1 interaction · 1 keyboard event · 1 install · 1 update · last /);
    // The figures come over the stream, which may be ahead of the last event's own answer.
    await expect.poll(() => page.textContent('#event-result')).toMatch(/^Update recorded: OBSIDIAN 1\.5\.0 → 1\.5\.1\.$/);
    await expect.poll(() => page.textContent('#application-list')).toContain('OBSIDIAN 1.5.1');
    const stored = await page.evaluate(
      async (app) => (await (await fetch(`http://localhost:1000/applications/${app}`)).json()).engagement,
      id,
    );
    expect(stored).toMatchObject({ interactions: 1, keyboard: 1, installations: 1, updates: 1 });
    await page.click('#register-browser');
    await expect.poll(() => page.textContent('#application-list')).toMatch(/WEB/);
  });

  it('opens, inspects and closes sessions', async () => {
    await page.click('#open-session');
    await page.waitForSelector('#session-list li[data-state="open"]');
    await page.click('#session-list li .link');
    await expect.poll(() => page.textContent('#session-list li .detail')).toContain('"opened"');
    await page.click('#session-list li .small');
    await page.waitForSelector('#session-list li[data-state="closed"]');
  });

  it('lists detected and related external applications', async () => {
    expect(await page.textContent('#detected-list')).toMatch(BROWSER_NAME);
    expect(await page.textContent('#related-list')).toContain('Visual Studio Code');
  });

  it('says so when an event is sent for no application', async () => {
    await page.selectOption('#event-application', '');
    await page.click('[data-event="interaction"]');
    await expect.poll(() => page.textContent('#event-result')).toContain('Interaction recorded for no application: it counts for none.');
  });

  it('shows the service message of a failed request next to the control, covering nothing, with a close button', async () => {
    await page.selectOption('#event-application', '');
    await page.click('[data-event="update"]');
    await expect.poll(() => page.textContent('#error-text')).toContain('Choose an application');
    expect(await visible(page, '#error')).toBe(true);
    // In the flow of the page, right after the failing control's row: every control stays reachable.
    const covered = await page.evaluate(() => {
      const row = document.querySelector('[data-event="update"]')!.closest('.row')!;
      return {
        after: row.nextElementSibling?.id,
        hidden: [...document.querySelectorAll<HTMLElement>('button, input, select, textarea')]
          .filter((control) => control.getClientRects().length > 0 && !control.closest('#error'))
          .filter((control) => {
            control.scrollIntoView({ block: 'center' });
            const box = control.getBoundingClientRect();
            const top = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
            return top !== null && !control.contains(top) && !!top.closest('#error');
          })
          .map((control) => control.id || control.textContent),
      };
    });
    expect(covered).toEqual({ after: 'error', hidden: [] });
    await page.click('#error-close');
    expect(await visible(page, '#error')).toBe(false);
  });

  it("stays started when a pane cannot load (a mirrored Pieces OS without the models, say): the pane's error shows, the other panes load", async () => {
    const pieces = piecesControls(page);
    await pieces.use({ operation: 'modelsSnapshot', status: 404, body: 'GET /models: no such operation here.' });
    try {
      const other = await context.newPage();
      await other.goto(inject('demoUrl'));
      await other.waitForFunction(() => document.body.dataset.loaded === 'true', undefined, { timeout: 30_000 });
      expect(await other.getAttribute('#status', 'data-state')).toBe('ready');
      expect(await other.textContent('#error-text')).toContain('no such operation here');
      // Loaded after the models in the same round: the health pill, the applications.
      expect(await other.getAttribute('#health', 'data-state')).toBe('ready');
      await other.close();
    } finally {
      await pieces.resetOverrides();
    }
  });

  it('logs every call with its operation', async () => {
    const operations = await page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>('#request-log li')].map((li) => li.dataset.operation),
    );
    for (const name of [
      'conversationsCreateSpecificConversation',
      'conversationsCreateFromAsset',
      'conversationsDeleteSpecificConversation',
      'applicationsRegister',
      'applicationsSessionOpen',
      'assetsIdentifiersSnapshot',
    ]) {
      expect(operations).toContain(name);
    }
    expect(await page.textContent('#request-log li .ms')).toMatch(/^\d+\.\d ms$/);
  });

  it('runs under its strict CSP with no violation and no error, and leaves a screenshot', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // With a conversation open, so that the picture shows the detail pane too.
    await page.click('#conversation-list li .link');
    await page.waitForSelector('#message-list li[data-id]');
    await page.screenshot(resolve(ARTIFACTS, `demo-${engine.name}.png`));
    const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
    expect(csp).toContain("script-src 'self'");
    expect(await problems()).toEqual([]);
  });
});

describe('the demo in two tabs', () => {
  it('keeps both lists identical to the store while both tabs write', async () => {
    const { context } = await launch();
    try {
      const a = await openWatchedDemo(context);
      const b = await openWatchedDemo(context);
      for (let i = 0; i < 3; i++) {
        await a.page.fill('#create-name', `from A ${i}`);
        await a.page.click('#create-conversation');
        await b.page.fill('#create-name', `from B ${i}`);
        await b.page.click('#create-conversation');
      }
      await expect.poll(async () => (await storeIds(a.page)).length).toBe(6);
      await listMatchesStore(a.page);
      await listMatchesStore(b.page);
      const victim = (await storeIds(a.page))[0];
      await a.page.click(`#conversation-list li[data-id="${victim}"] .link`);
      await expect.poll(() => visible(a.page, '#conversation-detail')).toBe(true);
      await b.page.click(`#conversation-list li[data-id="${victim}"] .danger`);
      await expect.poll(() => listIds(a.page)).not.toContain(victim);
      // The tab that showed it no longer does.
      expect(await visible(a.page, '#conversation-detail')).toBe(false);
      await listMatchesStore(a.page);
      // The deleting tab's list follows its own delete as the other's follows the stream: wait for it too.
      await listMatchesStore(b.page);
      expect(await listIds(b.page)).toEqual(await listIds(a.page));
    } finally {
      await context.close();
    }
  });
});

describe('the demo offline', () => {
  it('answers every operation with the browser offline', async (test) => {
    need(test, 'offline');
    const { context } = await launch();
    try {
      const { page } = await openWatchedDemo(context);
      await context.setOffline(true);
      const statuses = await page.evaluate(async () => {
        const base = 'http://localhost:1000';
        const json = { 'Content-Type': 'application/json' };
        const app = { id: crypto.randomUUID(), name: 'VS_CODE', version: '1', platform: 'LINUX', onboarded: true, privacy: 'OPEN' };
        const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = json) =>
          (await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })).status;
        const created = (await (
          await fetch(`${base}/conversations/create`, { method: 'POST', headers: json, body: '{"type":"COPILOT"}' })
        ).json()) as { id: string };
        const session = (await (await fetch(`${base}/applications/session/open`, { method: 'POST' })).json()) as { id: string };
        const asset = ((await (await fetch(`${base}/assets/identifiers`)).json()) as { iterable: { id: string }[] }).iterable[0]!.id;
        return {
          applicationsRegister: await call('POST', '/applications/register', app),
          applicationsSnapshot: await call('GET', '/applications'),
          applicationsSpecificApplicationSnapshot: await call('GET', `/applications/${app.id}`),
          applicationsExternalSnapshot: await call('GET', '/applications/external'),
          applicationsExternalRelated: await call('GET', '/applications/external/related'),
          applicationsSessionSnapshot: await call('GET', `/applications/sessions/${session.id}`),
          applicationsSessionClose: await call('POST', '/applications/session/close', session.id),
          applicationsUsageEngagementInteraction: await call('POST', '/applications/usage/engagement/interaction', { description: 'x' }),
          applicationsUsageEngagementKeyboard: await call('POST', '/applications/usage/engagement/keyboard', {
            description: 'x',
            shortcut: [1],
          }),
          applicationsUsageInstallation: await call('POST', '/applications/usage/installation', { application: app }),
          postApplicationsUsageUpdated: await call('POST', '/applications/usage/updated', { current: app }),
          conversationsSnapshot: await call('GET', '/conversations?transferables=false'),
          conversationsIdentifiersSnapshot: await call('GET', '/conversations/identifiers'),
          conversationsCreateFromAsset: await call('POST', `/conversations/create/from_asset/${asset}`),
          conversationsDeleteSpecificConversation: await call('POST', `/conversations/${created.id}/delete`),
          assetsIdentifiersSnapshot: await call('GET', '/assets/identifiers'),
        };
      });
      for (const [operation, status] of Object.entries(statuses)) {
        expect([operation, status]).toEqual([operation, /Installation|Updated|Delete/.test(operation) ? 204 : 200]);
      }
      // The stream too: a new socket opens and gets the snapshot.
      const first = await page.evaluate(
        () =>
          new Promise<string>((resolve, reject) => {
            const socket = new WebSocket('ws://localhost:1000/conversations/stream/identifiers');
            socket.onmessage = (event) => resolve(event.data as string);
            socket.onerror = () => reject(new Error('stream failed offline'));
          }),
      );
      expect(JSON.parse(first)).toHaveProperty('iterable');
    } finally {
      await context.close();
    }
  });
});

describe('the demo on a base that is not localhost', () => {
  it('connects to https://api.example.test/pieces under its policy, and to nothing else', async () => {
    const { context } = await launch();
    try {
      const page = await context.newPage();
      await page.goto(`${inject('demoUrl')}?bases=https://api.example.test/pieces`);
      await page.evaluate(() => {
        window.problems = [];
        document.addEventListener('securitypolicyviolation', (event) =>
          window.problems.push(`${event.violatedDirective} ${event.blockedURI}`),
        );
      });
      await page.waitForSelector('#status[data-state="ready"]');
      await page.waitForSelector('#stream-state[data-state="open"]');
      expect(await page.textContent('#bases')).toBe('https://api.example.test/pieces');
      const policies = await page.evaluate(() =>
        [...document.querySelectorAll('meta[http-equiv="Content-Security-Policy"]')].map((m) => m.getAttribute('content')),
      );
      expect(policies).toContain("connect-src 'self' https://api.example.test/pieces/ wss://api.example.test/pieces/");
      // The demo itself works on that base.
      await page.fill('#create-name', 'on another base');
      await page.click('#create-conversation');
      await expect.poll(() => page.textContent('#conversation-list')).toContain('on another base');
      expect(await page.evaluate(() => window.problems)).toEqual([]);
      // Any other URL is refused by the policy.
      const outside = await page.evaluate(async () => {
        try {
          await fetch('http://localhost:1000/applications');
          return 'answered';
        } catch {
          return 'refused';
        }
      });
      expect(outside).toBe('refused');
      await expect
        .poll(() => page.evaluate(() => window.problems))
        .toEqual([expect.stringMatching(/^connect-src http:\/\/localhost:1000\//)]);
    } finally {
      await context.close();
    }
  });
});

/**
 * The demo in a frame of a blank page of its origin: the frame's size is the
 * demo's window size (its viewport, its media queries), the same in every engine.
 */
async function openFramed(context: BrowserContext, width: number, height: number): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${inject('demoUrl')}probe.html`);
  await page.evaluate((url) => {
    document.body.style.margin = '0';
    const frame = document.createElement('iframe');
    frame.style.border = '0';
    frame.src = url;
    document.body.append(frame);
  }, inject('demoUrl'));
  await resizeFrame(page, width, height);
  await page.waitForFunction(() => document.querySelector('iframe')?.contentDocument?.body?.dataset.loaded === 'true');
  return page;
}

const resizeFrame = (page: Page, width: number, height: number) =>
  page.evaluate(
    ([w, h]) => {
      const frame = document.querySelector('iframe')!;
      frame.width = String(w);
      frame.height = String(h);
    },
    [width, height] as const,
  );

/** The demo's panes by row: the ids in each row, and the width of the grid the row leaves blank. */
const paneRows = (page: Page) =>
  page.evaluate(() => {
    const d = document.querySelector('iframe')!.contentDocument!;
    const grid = d.querySelector('main.grid')!;
    const gap = parseFloat(getComputedStyle(grid).columnGap) || 0;
    const rows = new Map<number, DOMRect[]>();
    const ids = new Map<number, string[]>();
    for (const card of grid.querySelectorAll<HTMLElement>(':scope > .card')) {
      if (!card.getClientRects().length) continue;
      const box = card.getBoundingClientRect();
      const top = Math.round(box.top);
      rows.set(top, [...(rows.get(top) ?? []), box]);
      ids.set(top, [...(ids.get(top) ?? []), card.id]);
    }
    const width = grid.getBoundingClientRect().width;
    return [...rows.entries()].map(([top, boxes]) => ({
      panes: ids.get(top)!.join(' '),
      blank: Math.round(width - boxes.reduce((sum, box) => sum + box.width, 0) - gap * (boxes.length - 1)),
    }));
  });

/** The demo's window: how tall its page is, how tall the request log and how many entries, newest first. */
const requestLog = (page: Page) =>
  page.evaluate(() => {
    const d = document.querySelector('iframe')!.contentDocument!;
    const log = d.querySelector<HTMLElement>('#request-log')!;
    return {
      page: d.documentElement.scrollHeight,
      log: Math.round(log.getBoundingClientRect().height),
      entries: log.children.length,
      newest: (log.firstElementChild as HTMLElement | null)?.dataset.operation,
    };
  });

/** How many line boxes each base of the header's list takes. */
const baseLines = (page: Page) =>
  page.evaluate(() => {
    const d = document.querySelector('iframe')!.contentDocument!;
    const list = d.querySelector('#bases')!;
    const texts: Text[] = [];
    const walker = d.createTreeWalker(list, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) texts.push(walker.currentNode as Text);
    const full = texts.map((t) => t.data).join('');
    /** The text node and offset of a character of the list's text. */
    const at = (index: number): [Text, number] => {
      for (const text of texts) {
        if (index <= text.data.length) return [text, index];
        index -= text.data.length;
      }
      throw new Error('past the end');
    };
    const lines: Record<string, number> = {};
    for (const base of full.split(', ')) {
      const start = full.indexOf(base);
      const range = d.createRange();
      range.setStart(...at(start));
      range.setEnd(...at(start + base.length));
      lines[base] = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size;
    }
    return lines;
  });

describe('the demo laid out in a 1280×800 and an 800×900 window', () => {
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    ({ context } = await launch());
    page = await openFramed(context, 1280, 800);
  });

  afterAll(async () => {
    await context?.close();
  });

  it('fills the choice lists in the page as served, before the first paint', async () => {
    const served = await page.evaluate(async (url) => {
      const html = await (await fetch(url)).text();
      const d = new DOMParser().parseFromString(html, 'text/html');
      return Object.fromEntries(
        [...d.querySelectorAll('select')].map((select) => [
          select.id,
          { options: [...select.options].map((o) => o.value), value: select.value },
        ]),
      );
    }, inject('demoUrl'));
    for (const [id, { options }] of Object.entries(served)) expect([id, options.length > 0]).toEqual([id, true]);
    expect(served['register-name']).toEqual({ options: Object.values(ApplicationNameEnum), value: 'VS_CODE' });
    expect(served['register-platform']).toEqual({ options: Object.values(PlatformEnum), value: 'LINUX' });
    // The assets are the store's: read once the service answers, the list says so until then.
    expect(
      await page.evaluate(
        () =>
          document.querySelector('iframe')!.contentDocument!.querySelector<HTMLSelectElement>('#asset-select')!.selectedOptions[0]!.label,
      ),
    ).toBe('debounce.ts');
  });

  it('never breaks a base of the header across lines (a port range included)', async () => {
    for (const [width, height] of [
      [1280, 800],
      [800, 900],
    ] as const) {
      await resizeFrame(page, width, height);
      const lines = await baseLines(page);
      expect(Object.keys(lines)).toContain('http://localhost:39300-39333');
      for (const [base, count] of Object.entries(lines)) expect([width, base, count]).toEqual([width, base, 1]);
    }
  });

  it('lays the panes out with no column left blank beside them, the request log a fixed-height panel that does not grow the page', async () => {
    for (const [width, height] of [
      [1280, 800],
      [800, 900],
    ] as const) {
      await resizeFrame(page, width, height);
      for (const row of await paneRows(page)) expect([width, row.panes, row.blank <= 2]).toEqual([width, row.panes, true]);
    }
    await resizeFrame(page, 1280, 800);
    const before = await requestLog(page);
    // 260 more calls: each change of the transferables choice reads the list twice.
    await page.evaluate(async () => {
      const box = document.querySelector('iframe')!.contentDocument!.querySelector<HTMLInputElement>('#transferables')!;
      for (let i = 0; i < 130; i++) {
        box.click();
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    });
    await page.waitForFunction(() => document.querySelector('iframe')!.contentDocument!.querySelectorAll('#request-log li').length >= 200);
    const after = await requestLog(page);
    expect(after).toEqual({ page: before.page, log: before.log, entries: 200, newest: 'conversationsSnapshot' });
  });

  it('gives messages the width of their pane: a line of text, not a narrow column', async () => {
    // A conversation with an answer, shown in the copilot pane and the conversation pane.
    await page.evaluate(() => {
      const d = document.querySelector('iframe')!.contentDocument!;
      d.querySelector<HTMLTextAreaElement>('#chat-question')!.value = 'How do I retry with exponential backoff?';
      d.querySelector<HTMLButtonElement>('#chat-ask')!.click();
    });
    await page.waitForFunction(
      () => document.querySelector('iframe')!.contentDocument!.querySelector<HTMLElement>('#chat-state')!.dataset.state === 'done',
    );
    await page.waitForFunction(() => !!document.querySelector('iframe')!.contentDocument!.querySelector('#conversation-list li .link'));
    await page.evaluate(() =>
      document.querySelector('iframe')!.contentDocument!.querySelector<HTMLButtonElement>('#conversation-list li .link')!.click(),
    );
    await page.waitForFunction(
      () => !!document.querySelector('iframe')!.contentDocument!.querySelector('#message-list li[data-role="ASSISTANT"]'),
    );
    for (const [width, height] of [
      [1280, 800],
      [800, 900],
    ] as const) {
      await resizeFrame(page, width, height);
      const widths = await page.evaluate(() => {
        const d = document.querySelector('iframe')!.contentDocument!;
        const width = (selector: string) => Math.round(d.querySelector(selector)!.getBoundingClientRect().width);
        return { chat: width('#chat-log .bubble.assistant'), conversation: width('#message-list li[data-role="ASSISTANT"] .text') };
      });
      // 480 px: some 70 characters of the pane's text in a line.
      expect([width, widths.chat >= 480, widths.conversation >= 480]).toEqual([width, true, true]);
    }
  });
});

describe('the snippets pane', () => {
  let context: BrowserContext;

  beforeAll(async () => {
    ({ context } = await launch());
  });

  afterAll(async () => {
    await context?.close();
  });

  const snippetNames = (page: Page) =>
    page.evaluate(() => [...document.querySelectorAll('#snippet-list li .snippet-open')].map((b) => b.textContent));

  it('saves pasted text, edits it, searches it and deletes it, live in a second tab', async () => {
    const { page, problems } = await openWatchedDemo(context);
    const { page: other } = await openWatchedDemo(context);
    for (const p of [page, other]) await p.waitForSelector('#snippet-stream-state[data-state="open"]');
    await page.waitForFunction(() => document.querySelectorAll('#snippet-list li').length >= 4);

    await page.fill(
      '#snippet-new-text',
      'def parse_header(line):\n    name, _, value = line.partition(":")\n    return name.strip(), value.strip()\n',
    );
    await page.click('#snippet-create');
    // Named from its first declaration, classified from its text; its formats shown.
    await page.waitForFunction(() =>
      [...document.querySelectorAll('#snippet-list .snippet-open')].some((b) => b.textContent === 'parse_header.py'),
    );
    expect(await visible(page, '#snippet-detail')).toBe(true);
    expect(await page.evaluate(() => [...document.querySelectorAll('#snippet-formats li')].map((li) => li.textContent))).toEqual([
      expect.stringMatching(/^BOTH · CODE py · \d+ B · original · preview$/),
    ]);
    expect(await page.inputValue('#snippet-description')).toBe('A Python snippet of 3 lines, declaring parse_header.');
    // The other tab hears it on the assets stream.
    await other.waitForFunction(() =>
      [...document.querySelectorAll('#snippet-list .snippet-open')].some((b) => b.textContent === 'parse_header.py'),
    );

    await page.fill('#snippet-rename', 'Header parser');
    await page.fill('#snippet-description', 'Splits an HTTP header line.');
    await page.fill('#snippet-text', 'def parse_header(line):\n    return line.split(":", 1)\n');
    await page.click('#snippet-save');
    await page.waitForFunction(() =>
      [...document.querySelectorAll('#snippet-list .snippet-open')].some((b) => b.textContent === 'Header parser'),
    );
    const id = await page.evaluate(() => document.querySelector<HTMLElement>('#snippet-list li.selected')!.dataset.id!);
    const stored = await page.evaluate(async (asset) => (await fetch(`http://localhost:1000/asset/${asset}`)).json(), id);
    expect([stored.name, stored.annotations.iterable[0].text, stored.original.reference.fragment.string.raw]).toEqual([
      'Header parser',
      'Splits an HTTP header line.',
      'def parse_header(line):\n    return line.split(":", 1)\n',
    ]);
    await other.waitForFunction(() =>
      [...document.querySelectorAll('#snippet-list .snippet-open')].some((b) => b.textContent === 'Header parser'),
    );

    await page.fill('#snippet-query', 'split header');
    await page.click('#snippet-search-go');
    await page.waitForFunction(() => document.querySelector('#snippet-search-state')!.textContent !== '');
    expect(await snippetNames(page)).toEqual(['Header parser']);
    await page.fill('#snippet-query', '');
    await page.click('#snippet-search-go');
    await page.waitForFunction(() => document.querySelectorAll('#snippet-list li').length > 1);

    await page.click('#snippet-delete');
    await page.waitForFunction((asset) => !document.querySelector(`#snippet-list li[data-id="${asset}"]`), id);
    await other.waitForFunction((asset) => !document.querySelector(`#snippet-list li[data-id="${asset}"]`), id);
    expect(await visible(page, '#snippet-detail')).toBe(false);
    expect(await problems()).toEqual([]);
  });
});

describe('the material explorer', () => {
  let context: BrowserContext;

  beforeAll(async () => {
    ({ context } = await launch());
  });

  afterAll(async () => {
    await context?.close();
  });

  /** The id of the listed record named `name`, once the explorer lists it. */
  const listed = async (page: Page, name: string) => {
    await page.waitForFunction((n) => [...document.querySelectorAll('#material-list li .name')].some((e) => e.textContent === n), name);
    return page.evaluate(
      (n) =>
        [...document.querySelectorAll<HTMLElement>('#material-list li')].find((li) => li.querySelector('.name')?.textContent === n)!.dataset
          .id!,
      name,
    );
  };
  /** The names the open record's reference field `key` shows. */
  const linked = (page: Page, key: string) =>
    page.evaluate((k) => [...document.querySelectorAll(`#material-links li[data-key="${k}"] .linked`)].map((e) => e.textContent), key);
  const choose = async (page: Page, kind: string) => {
    await page.selectOption('#material-kind', kind);
    await page.waitForFunction((k) => document.querySelector('#material-kind option:checked')?.getAttribute('value') === k, kind);
    await page.waitForSelector('#material-stream-state[data-state="open"]');
  };

  it('creates a person and a workstream summary from their forms, associates them, sees both sides, a second tab live, and deletes', async () => {
    // The tab most of the test works in opened last, in front (a page behind another has its animation frames held back).
    const { page: other, problems: otherProblems } = await openWatchedDemo(context);
    const { page, problems } = await openWatchedDemo(context);
    for (const p of [page, other]) {
      await p.waitForSelector('body[data-loaded="true"]');
      await choose(p, 'person');
    }

    // A person: SeededPerson needs only a type (a PersonType with no required field); its name in the JSON of further fields.
    await page.fill('#material-extra', '{"type": {"basic": {"name": "Ada Lovelace"}}}');
    await page.click('#material-create');
    const person = await listed(page, 'Ada Lovelace');
    // The other tab's list follows the person stream; its own create shows up here the same way.
    await listed(other, 'Ada Lovelace');
    await other.fill('#material-extra', '{"type": {"basic": {"name": "Grace Hopper"}}}');
    await other.click('#material-create');
    await listed(page, 'Grace Hopper');

    // A bad seed is named before anything is sent.
    await page.fill('#material-extra', '{"type": {"basic": {"name": 7}}}');
    const creates = await logged(page, 'personsCreateNewPerson');
    await page.click('#material-create');
    await expect.poll(() => page.textContent('#error-text')).toContain('seededPerson.type.basic.name: expected a string');
    expect(await logged(page, 'personsCreateNewPerson')).toBe(creates);
    await page.click('#error-close');

    // A workstream summary: its name and its required model's required fields, as inputs.
    await choose(page, 'workstreamSummary');
    await page.fill('#material-field-name', 'Week 48');
    await page.fill('#material-field-model-id', 'b6b7a0c2-7d1e-4a8e-9a3c-5f0d2e1c4b90');
    await page.fill('#material-field-model-version', '1.0.0');
    await page.fill('#material-field-model-name', 'Local summariser');
    await page.click('#material-create');
    const summary = await listed(page, 'Week 48');
    await page.waitForFunction(
      (id) =>
        document.querySelector<HTMLElement>('#material-detail')?.dataset.id === id &&
        !document.querySelector<HTMLElement>('#material-detail')!.hidden,
      summary,
    );

    // Associated from the summary: workstreamSummaryAssociatePerson, both sides list each other.
    await page.selectOption('#material-relation', 'workstreamSummaryAssociatePerson');
    await page.waitForFunction((id) => !!document.querySelector(`#material-other option[value="${id}"]`), person);
    await page.selectOption('#material-other', person);
    await page.click('#material-associate-go');
    await expect.poll(() => linked(page, 'persons')).toEqual(['Ada Lovelace']);
    await page.click('#material-links li[data-key="persons"] .linked');
    await page.waitForFunction((id) => document.querySelector<HTMLElement>('#material-detail')?.dataset.id === id, person);
    await expect.poll(() => linked(page, 'summaries')).toEqual(['Week 48']);
    expect(await page.inputValue('#material-kind')).toBe('person');

    // Deleted from the summary's side: the person no longer lists it.
    await choose(page, 'workstreamSummary');
    await page.click(`#material-list li[data-id="${summary}"] .danger`);
    await page
      .waitForFunction((id) => !document.querySelector(`#material-list li[data-id="${id}"]`), summary)
      .catch(async (error) => {
        // What the page shows when the list still holds it: the error box, the stream's state and the last requests (newest first).
        const shown = await page.evaluate(() => ({
          error: document.querySelector<HTMLElement>('#error')?.hidden ? null : document.querySelector('#error-text')?.textContent,
          stream: document.querySelector('#material-stream-state')?.textContent,
          log: [...document.querySelectorAll('#request-log li')].slice(0, 8).map((li) => li.textContent),
        }));
        throw new Error(`${(error as Error).message}\n${JSON.stringify(shown, null, 1)}`);
      });
    await choose(page, 'person');
    await page.click(`#material-list li[data-id="${person}"] .material-open`);
    await page.waitForFunction((id) => document.querySelector<HTMLElement>('#material-detail')?.dataset.id === id, person);
    expect(await linked(page, 'summaries')).toEqual([]);

    for (const name of [
      'personsCreateNewPerson',
      'personsSnapshot',
      'personSnapshot',
      'workstreamSummariesCreateNewWorkstreamSummary',
      'workstreamSummaryAssociatePerson',
      'workstreamSummariesDeleteSpecificWorkstreamSummary',
    ])
      expect([name, (await logged(page, name)) > 0]).toEqual([name, true]);
    expect(await logged(page, 'unknown')).toBe(0);
    expect(await problems()).toEqual([]);
    expect(await otherProblems()).toEqual([]);
  });
});

describe('the demo page’s models pane', () => {
  let context: BrowserContext;
  let ollama: FakeOllama;

  beforeAll(async () => {
    ollama = await startFakeOllama();
    ({ context } = await launch());
  });

  afterAll(async () => {
    await context?.close();
    await ollama?.close();
  });

  /** A model row's text, progress and state, by the model's name. */
  const modelRow = (page: Page, name: string) =>
    page.evaluate((n) => {
      const li = [...document.querySelectorAll<HTMLElement>('#model-list li')].find((l) => l.querySelector('strong')?.textContent === n);
      return li
        ? {
            id: li.dataset.id!,
            downloaded: li.dataset.downloaded,
            answered: li.querySelector('.answered')?.textContent,
            progress: li.querySelector('.progress')?.textContent ?? null,
          }
        : null;
    }, name);

  it('shows the catalogue and which model answers each, downloads with progress, maps a model to Ollama and pulls it', async () => {
    const { page, problems } = await openWatchedDemo(context);
    await page.waitForSelector('body[data-loaded="true"]');
    expect(Number(await page.textContent('#model-count'))).toBeGreaterThan(20);
    expect(await modelRow(page, 'GPT-3.5-turbo Chat Model')).toMatchObject({
      answered: 'answered by the default: no model (extractive answers)',
      progress: null,
    });
    // A local model with nothing to fetch: its socket reports COMPLETED, the row shows it downloaded.
    const phi = (await modelRow(page, 'Phi-2 CPU Chat Model'))!;
    await page.click(`#model-list li[data-id="${phi.id}"] button.download`);
    await expect.poll(async () => (await modelRow(page, 'Phi-2 CPU Chat Model'))?.downloaded, { timeout: 10_000 }).toBe('true');
    expect((await modelRow(page, 'Phi-2 CPU Chat Model'))!.progress).toBe('COMPLETED 100%');
    await page.click(`#model-list li[data-id="${phi.id}"] button.delete`);
    await expect.poll(async () => (await modelRow(page, 'Phi-2 CPU Chat Model'))?.downloaded, { timeout: 10_000 }).toBe('false');
    // Mapped to Ollama: the row says so, and a download is Ollama's pull with its real progress.
    const llama = (await modelRow(page, 'Llama-2 7B GPU Chat Model'))!;
    await page.selectOption('#map-model', llama.id);
    await page.selectOption('#map-kind', 'ollama');
    await page.fill('#map-base-url', ollama.baseUrl);
    await page.fill('#map-name', 'slow:llama2');
    await page.click('#map-save');
    await expect
      .poll(async () => (await modelRow(page, 'Llama-2 7B GPU Chat Model'))?.answered, { timeout: 10_000 })
      .toBe(`answered by slow:llama2 at ${ollama.baseUrl} (Ollama)`);
    await page.click(`#model-list li[data-id="${llama.id}"] button.download`);
    const seen = new Set<string>();
    await expect
      .poll(
        async () => {
          const progress = (await modelRow(page, 'Llama-2 7B GPU Chat Model'))?.progress ?? '';
          seen.add(progress.replace(/[\d.]+%$/, 'n%'));
          return progress;
        },
        { timeout: 20_000, interval: 20 },
      )
      .toBe('COMPLETED 100%');
    expect(seen).toContain('IN-PROGRESS n%');
    expect(ollama.pulled.has('slow:llama2')).toBe(true);
    await expect.poll(async () => (await modelRow(page, 'Llama-2 7B GPU Chat Model'))?.downloaded).toBe('true');
    expect(await logged(page, 'modelSpecificModelDownload')).toBe(2);
    expect(await problems()).toEqual([]);
  });
});

describe('the long-term memory pane', () => {
  let context: BrowserContext;

  beforeAll(async () => {
    ({ context } = await launch());
  });

  afterAll(async () => {
    await context?.close();
  });

  const timeline = (page: Page) =>
    page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>('#ltm-timeline li')].map((li) => ({
        kind: li.dataset.kind,
        inRange: li.dataset.inRange,
        name: li.querySelector('.name')?.textContent,
      })),
    );

  it('ingests an event, shows it on the timeline inside the range, summarizes the range and answers a question over it', async () => {
    const { page, problems } = await openWatchedDemo(context);
    await page.waitForSelector('body[data-loaded="true"]');
    await page.waitForSelector('#ltm-stream-state[data-state="open"]');
    await page.fill('#ltm-window', 'upload.ts — courier');
    await page.fill('#ltm-text', 'fixed the retry loop in the upload client: backoff doubles up to 30 s');
    await page.click('#ltm-ingest-go');
    await expect.poll(() => timeline(page)).toEqual([{ kind: 'event', inRange: 'true', name: 'upload.ts — courier' }]);

    // A range that ended before the event holds none of it.
    await page.fill('#ltm-from', '2020-01-01T00:00');
    await page.fill('#ltm-to', '2020-01-02T00:00');
    await page.evaluate(() => document.querySelector('#ltm-to')!.dispatchEvent(new Event('change')));
    await expect.poll(() => page.textContent('#ltm-in-range')).toBe('0 of 1 in the range');

    // The last 15 minutes: summarized, the summary comes on the timeline through its stream.
    await page.click('#ltm-spans button[data-minutes="15"]');
    await page.click('#ltm-summarize');
    await expect.poll(async () => (await timeline(page)).map((entry) => entry.kind).sort()).toEqual(['event', 'summary']);

    await page.fill('#ltm-question', 'What did I change in the retry loop?');
    await page.click('#ltm-ask-go');
    await expect.poll(() => page.textContent('#ltm-answer'), { timeout: 15_000 }).toContain('retry loop');
    for (const name of [
      'workstreamPatternEngineCreateIngestion',
      'workstreamSummariesCreateAutogeneratedWorkstreamSummary',
      'rangesCreateNewRange',
      'question',
    ])
      expect([name, (await logged(page, name)) > 0]).toEqual([name, true]);
    expect(await problems()).toEqual([]);
  });
});
