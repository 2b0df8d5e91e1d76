/** Handlers of WellKnownApi: discovery, answered without touching the database. */
import { reply } from '../http.js';
import { PIECES_OS_VERSION } from '../../shared/version.js';

export async function getWellKnownHealth() {
  return reply('ok', { type: 'text' });
}

export async function getWellKnownVersion() {
  return reply(PIECES_OS_VERSION, { type: 'text' });
}
