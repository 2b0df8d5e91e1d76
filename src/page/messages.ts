/** Console messages and errors of the page library, every one prefixed `[pieces-os-worker]`. */
import { PREFIX } from '../shared/console.js';

/** What to do when the worker script is missing or stale. */
export const INIT_HINT =
  'Run `npx pieces-os-worker init public` (public/ being the folder your app serves at its root), or add the Vite plugin `pieces-os-worker/vite`.';

/** An error of the page library; its message starts with `[pieces-os-worker]` and says what to do. */
export class PiecesServiceError extends Error {
  override readonly name = 'PiecesServiceError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(`${PREFIX} ${message}`, options);
  }
}

export const info = (quiet: boolean | undefined, message: string) => {
  if (!quiet) console.info(`${PREFIX} ${message}`);
};

export const warn = (message: string) => console.warn(`${PREFIX} ${message}`);
