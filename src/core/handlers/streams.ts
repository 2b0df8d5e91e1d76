/**
 * The socket paths: a plain GET is 426; the shim's handshake and `?after=N` catch-up are answered
 * from the change log, in the wire shapes of stream-wire.ts.
 */
import type { OperationContext } from '../context.js';
import { badRequest, clip, HttpError, json } from '../http.js';
import type { Collection } from '../../storage/storage.js';
import { identifiersFrame, STREAM_HEADER, type CatchUp, type Handshake } from '../stream-wire.js';
import { localUser } from './user.js';

function handshake({ request, url }: OperationContext) {
  if (request.headers.get(STREAM_HEADER) !== 'handshake') {
    const path = clip(url.pathname);
    throw new HttpError(426, `${path} is a WebSocket: connect with new WebSocket("ws://${url.host}${path}").`, {
      Upgrade: 'websocket',
    });
  }
}

/** An identifier stream: first message every id of the collection, then one message per change. */
export const identifierStream = (collection: Collection) => async (context: OperationContext) => {
  handshake(context);
  const { service, url } = context;
  const after = url.searchParams.get('after');
  if (after !== null && !/^\d+$/.test(after)) throw badRequest(`after must be a change sequence number, not ${clip(JSON.stringify(after))}.`);
  // The identity is read before the data: if the database is replaced in between, the socket keeps
  // the older identity, and its next check (which gets the new one) makes it start afresh.
  const database = await service.storage.identity();
  if (after !== null) return json({ ...(await service.storage.changesSince(Number(after), collection)), database } satisfies CatchUp);
  const { ids, seq } = await service.storage.listIds(collection);
  return json({ seq, database, message: identifiersFrame(collection, ids) } satisfies Handshake);
};

export const conversationsStreamIdentifiers = identifierStream('conversation');
export const conversationMessagesStreamIdentifiers = identifierStream('conversationMessage');
export const assetsStreamIdentifiers = identifierStream('asset');
export const applicationsStreamIdentifiers = identifierStream('application');
export const activitiesStreamIdentifiers = identifierStream('activity');

/** getWellKnownStreamHealth: `ok` on open, then periodically while the service answers. */
export async function getWellKnownStreamHealth(context: OperationContext) {
  handshake(context);
  return json({ seq: 0, message: 'ok' } satisfies Handshake);
}

/** streamUser: the ReturnedUserProfile on open. */
export async function streamUser(context: OperationContext) {
  handshake(context);
  const user = await localUser(context);
  return json({ seq: 0, message: user ? { user } : {} } satisfies Handshake);
}
