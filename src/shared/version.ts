declare global {
  const __PIECES_VERSION__: string;
}
/** The package version, shared by the worker and the page library to detect a mismatch. */
export const VERSION: string = __PIECES_VERSION__;

/**
 * The Pieces OS version the service reports (`/.well-known/version`, connect). Clients
 * of the SDK 4.1.0 generation (pieces-cli, the Python SDK wrapper, editor plugins)
 * accept Pieces OS 12.x (they check >= 12.0.0 and < 13.0.0).
 */
export const PIECES_OS_VERSION = '12.3.0';
