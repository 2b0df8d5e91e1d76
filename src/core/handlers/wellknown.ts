/** Handlers of WellKnownApi: discovery, answered without touching the database. */
import { text } from '../http.js';
import { PIECES_OS_VERSION } from '../../shared/version.js';

export async function getWellKnownHealth() {
  return text('ok', 200);
}

export async function getWellKnownVersion() {
  return text(PIECES_OS_VERSION, 200);
}
