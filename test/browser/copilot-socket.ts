/** A /qgpt/stream socket opened in a test page, recording every frame it receives (copilot and copilot-stream tests). */
import type { Page } from './engine.js';

export interface Frame {
  request?: string;
  conversation: string;
  status: string;
  question?: { answers: { iterable: Array<{ text: string }> } };
  errorMessage?: string;
  statusCode?: number;
}

declare global {
  interface Window {
    copilotFrames: Frame[];
    copilotSocket?: WebSocket;
  }
}

/** Opens the socket in the page; its frames are kept in `window.copilotFrames`. */
export const openCopilot = (page: Page) =>
  page.evaluate(
    () =>
      new Promise<void>((resolve, reject) => {
        window.copilotFrames = [];
        const socket = new WebSocket('ws://localhost:1000/qgpt/stream');
        window.copilotSocket = socket;
        socket.onmessage = (event) => window.copilotFrames.push(JSON.parse(event.data));
        socket.onopen = () => resolve();
        socket.onerror = () => reject(new Error('the copilot socket failed'));
      }),
  );

export const send = (page: Page, input: unknown) => page.evaluate((i) => window.copilotSocket!.send(JSON.stringify(i)), input);
export const framesOf = (page: Page, request: string) => page.evaluate((r) => window.copilotFrames.filter((f) => f.request === r), request);
/** Waits for the frame that ends `request` (COMPLETED, STOPPED, FAILED…). */
export const ended = (page: Page, request: string) =>
  page.waitForFunction(
    (r) => window.copilotFrames.some((f) => f.request === r && !['INITIALIZED', 'IN-PROGRESS'].includes(f.status)),
    request,
  );
/** The text of each IN-PROGRESS frame, in order. */
export const chunks = (frames: Frame[]) =>
  frames.filter((f) => f.status === 'IN-PROGRESS').map((f) => f.question!.answers.iterable[0]!.text);
