/** Handlers of WellKnownApi: discovery, answered without touching the database. */
import { text } from '../http.js';

/**
 * The Pieces OS version reported by /.well-known/version and connect. Clients
 * of the SDK 4.1.0 generation (pieces-cli, the Python SDK wrapper, editor
 * plugins) accept Pieces OS 12.x (they check >= 12.0.0 and < 13.0.0).
 */
export const PIECES_OS_VERSION = '12.3.0';

export async function getWellKnownHealth() {
  return text('ok', 200);
}

export async function getWellKnownVersion() {
  return text(PIECES_OS_VERSION, 200);
}
