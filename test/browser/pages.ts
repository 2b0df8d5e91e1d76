/** What the browser tests do in a demo page: open it, record a stream socket, read ids. */
import { inject } from 'vitest';
import type { BrowserContext, Page } from './engine.js';

const STREAM = 'ws://localhost:1000/conversations/stream/identifiers';

export type StreamItem = { conversation: { id: string }; deleted?: true };

declare global {
  interface Window {
    /** Each message's `iterable`, in arrival order, of the socket a test opened. */
    streamMessages: StreamItem[][];
    /** That socket; opening another closes it. */
    streamSocket?: WebSocket;
  }
}

/** Opens the demo (with `query`, e.g. `?bases=…`) in a new page, once the worker controls it. */
export async function openDemo(context: BrowserContext, query = ''): Promise<Page> {
  const page = await context.newPage();
  await page.goto(inject('demoUrl') + query);
  await page.waitForSelector('#status[data-state="ready"]');
  return page;
}

/**
 * Opens a blank page of the demo's origin, with no Content-Security-Policy, once
 * the worker (installed by a demo page before, with its bases) controls it.
 */
export async function openProbe(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${inject('demoUrl')}probe.html`);
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
  return page;
}

/**
 * Opens a stream socket in the page that records every message (closing the one
 * opened before); resolves with the first message, the snapshot.
 */
export const listen = (page: Page) =>
  page.evaluate(
    (url) =>
      new Promise<StreamItem[]>((resolve, reject) => {
        window.streamSocket?.close();
        window.streamMessages = [];
        const socket = new WebSocket(url);
        window.streamSocket = socket;
        socket.onmessage = (event) => {
          if (window.streamSocket !== socket) return;
          window.streamMessages.push(JSON.parse(event.data).iterable);
          if (window.streamMessages.length === 1) resolve(window.streamMessages[0]!);
        };
        socket.onerror = () => reject(new Error('the stream failed'));
      }),
    STREAM,
  );

/** The ids a recording socket knows after applying its messages in order. */
export const socketIds = (page: Page) =>
  page.evaluate(() => {
    const ids: string[] = [];
    for (const item of window.streamMessages.flat()) {
      const at = ids.indexOf(item.conversation.id);
      if (item.deleted) {
        if (at >= 0) ids.splice(at, 1);
      } else if (at < 0) ids.push(item.conversation.id);
    }
    return ids;
  });

/** The store's conversation ids, from the identifier snapshot. */
export const storeIds = (page: Page) =>
  page.evaluate(async () => {
    const body = (await (await fetch('http://localhost:1000/conversations/identifiers')).json()) as { iterable: { id: string }[] };
    return body.iterable.map((i) => i.id);
  });
