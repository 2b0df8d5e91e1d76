/**
 * The test controls of the service in a browser page, from a Node test driving it (Playwright,
 * Puppeteer, or any object with `evaluate(fn, arg)`): `piecesControls(page)`.
 */
import { controlMessage, controlsOver, type PiecesControls } from '../host/controls.js';
import type { PageReply, PageRequest } from '../host/protocol.js';

/** What is needed of a page: Playwright's and Puppeteer's `evaluate`. */
export interface EvaluatingPage {
  evaluate<R, A>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R>;
}

export function piecesControls(page: EvaluatingPage): PiecesControls {
  return controlsOver(async (name, arg) => {
    const reply = await page.evaluate(async (message: PageRequest): Promise<PageReply> => {
      // Page mode: the page-mode host (see src/page/page-mode.ts) answers.
      const inPage = (globalThis as Record<symbol, { ask(m: unknown): Promise<PageReply> } | undefined>)[
        Symbol.for('pieces-os-worker.page-host')
      ];
      if (inPage) return inPage.ask(message).catch((error: Error) => ({ ok: false as const, error: error.message }));
      const container = navigator.serviceWorker;
      const worker = container?.controller ?? (container ? (await container.ready).active : null);
      if (!worker) return { ok: false, error: 'No pieces-os-worker controls this page: await startPiecesService() in the app first.' };
      return new Promise<PageReply>((resolve) => {
        const { port1, port2 } = new MessageChannel();
        port1.onmessage = (event) => {
          port1.close();
          resolve(event.data as PageReply);
        };
        worker.postMessage(message, [port2]);
      });
    }, controlMessage(name, arg) as PageRequest);
    if (!reply.ok) throw new Error(reply.error);
    return (reply as { data?: unknown }).data;
  });
}
