/**
 * Opens and transactions the browser aborts (Chromium's "Clear site data" aborts those under way
 * before it reports the connection closed): made once more on a new connection when the old one
 * no longer answers, never a 500; an abort on a connection that still answers is the call's own.
 */
import { describe, expect, it } from 'vitest';
import { reconnectingStorage, StorageUnavailableError } from '../../../src/storage/reconnect.js';
import type { Storage } from '../../../src/storage/storage.js';

const aborted = (message = 'The connection was closed.') => new DOMException(message, 'AbortError');

/** A connection whose listIds answers from `answer`, and whose changesSince (the liveness read) works while `alive`. */
function connection(answer: () => Promise<unknown>, alive: () => boolean) {
  return {
    listIds: answer,
    changesSince: async () => {
      if (!alive()) throw new DOMException('Connection is closing because of: Force close delete origin.', 'UnknownError');
      return { changes: [], complete: true, seq: 0 };
    },
    close: () => {},
  } as unknown as Storage;
}

describe('an open or a transaction the browser aborted', () => {
  it('is made again on a new connection when the connection no longer answers', async () => {
    let opens = 0;
    const storage = reconnectingStorage(async () => {
      opens++;
      return opens === 1
        ? connection(
            () => Promise.reject(aborted()),
            () => false,
          )
        : connection(
            async () => ({ ids: ['a'], seq: 1 }),
            () => true,
          );
    });
    expect(await storage.listIds('conversation')).toEqual({ ids: ['a'], seq: 1 });
    expect(opens).toBe(2);
  });

  it('is made again after an aborted open, and answers 503 (StorageUnavailableError) when that is aborted too', async () => {
    let opens = 0;
    const storage = reconnectingStorage(async () => {
      opens++;
      throw aborted();
    });
    await expect(storage.listIds('conversation')).rejects.toBeInstanceOf(StorageUnavailableError);
    expect(opens).toBe(2);
  });

  it("is the call's own error on a connection that still answers (no new connection)", async () => {
    let opens = 0;
    const storage = reconnectingStorage(async () => {
      opens++;
      return connection(
        () => Promise.reject(aborted('The transaction was aborted.')),
        () => true,
      );
    });
    await expect(storage.listIds('conversation')).rejects.toMatchObject({ name: 'AbortError', message: 'The transaction was aborted.' });
    expect(opens).toBe(1);
  });
});
