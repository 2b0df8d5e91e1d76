/**
 * The storage one write is answered with while the upstream cannot take it: the same storage,
 * whose first write of records that writes something appends the operation to the outbox in its
 * own transaction (queued if and only if the write commits), with the ids of the records it
 * creates (see Storage.queueing).
 */
import type { CreatedId } from '../../storage/schema.js';
import type { OutboxInput, OutboxScope, PendingOperation, Storage } from '../../storage/storage.js';
import { specOf } from './outbox-plan.js';

/** One request's operation: taken by one write at a time, until one queues it. */
export class RequestOutbox implements OutboxScope {
  #state: 'open' | 'taken' | 'queued' = 'open';

  constructor(private readonly input: OutboxInput) {}

  /** Whether the operation was queued (a write of the request committed with it). */
  get queued(): boolean {
    return this.#state === 'queued';
  }

  take(): PendingOperation | undefined {
    if (this.#state !== 'open') return undefined;
    this.#state = 'taken';
    // Only an operation declared to create records lists what it created (an update that puts a whole record creates nothing).
    const creates = !!specOf(this.input).creates;
    return {
      entry: (created: readonly CreatedId[]) => ({ ...this.input, created: creates ? [...created] : [] }),
      settle: (queued) => {
        this.#state = queued ? 'queued' : 'open';
      },
    };
  }
}

export interface Queueing {
  storage: Storage;
  /** Whether the operation was queued (its write was made). */
  queued(): boolean;
}

/** `storage`, whose first write of records queues `input` with it (later writes of the same request do not queue it again). */
export function queueingStorage(storage: Storage, input: OutboxInput): Queueing {
  const scope = new RequestOutbox(input);
  return { storage: storage.queueing(scope), queued: () => scope.queued };
}
