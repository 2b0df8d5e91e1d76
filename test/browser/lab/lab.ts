/**
 * A bare page for the start-up tests: `window.lab.start(options)` calls
 * startPiecesService and returns its result or error with every console
 * message it wrote.
 */
import { startPiecesService, type StartOptions } from '../../../src/page/index.js';

export interface LabResult {
  mode?: string;
  reason?: string;
  storage?: string;
  version?: { page: string; worker: string; mismatch: boolean };
  /** Whether the page's requests take the fast path. */
  fastPath?: boolean;
  error?: string;
  logs: string[];
}

declare global {
  interface Window {
    lab: {
      start(options?: StartOptions): Promise<LabResult>;
      /** Loads `url` (a lab page) in an iframe and starts the service there. */
      startInFrame(url: string, options?: StartOptions): Promise<LabResult>;
    };
  }
}

/** False in a build made with PIECES_FAST_PATH=off (test/browser/lab-server.ts). */
declare const __PIECES_FAST_PATH__: boolean;

window.lab = {
  async start(options = {}) {
    const logs: string[] = [];
    const methods = ['info', 'warn', 'error', 'log'] as const;
    const originals = methods.map((name) => console[name]);
    for (const name of methods) console[name] = (...args: unknown[]) => void logs.push(`${name}: ${args.map(String).join(' ')}`);
    try {
      const service = await startPiecesService({ fastPath: __PIECES_FAST_PATH__, ...options });
      return {
        mode: service.mode,
        reason: service.reason,
        storage: service.storage,
        version: service.version,
        fastPath: service.fastPath !== null,
        logs,
      };
    } catch (error) {
      return { error: (error as Error).message, logs };
    } finally {
      for (const [i, name] of methods.entries()) console[name] = originals[i]!;
    }
  },
  async startInFrame(url, options = {}) {
    const frame = document.createElement('iframe');
    frame.src = url;
    const ready = new Promise((resolve) => addEventListener('message', (e) => e.data === 'lab:ready' && resolve(null)));
    document.body.append(frame);
    await ready;
    const result = new Promise<LabResult>((resolve) =>
      addEventListener('message', (e) => e.data?.type === 'lab:result' && resolve(e.data.result as LabResult)),
    );
    frame.contentWindow!.postMessage({ type: 'lab:start', options }, '*');
    return result;
  },
};

// In an iframe: start on the parent's request and answer with the result.
if (parent !== window) {
  addEventListener('message', async (event) => {
    if (event.data?.type !== 'lab:start') return;
    const result = await window.lab.start(event.data.options as StartOptions);
    parent.postMessage({ type: 'lab:result', result }, '*');
  });
  parent.postMessage('lab:ready', '*');
}
