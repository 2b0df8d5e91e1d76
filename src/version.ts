/** The package version, shared by the worker and the page library to detect a mismatch. */
export const VERSION: string = __PIECES_VERSION__;
declare global {
  const __PIECES_VERSION__: string;
}
