/** Writing what the mirror learnt: one batch in one transaction, its changes announced to the service's sockets. */
import type { Service } from '../../core/service.js';
import type { Change, MirrorBatch, Storage } from '../../storage/storage.js';

export type Write = (batch: MirrorBatch) => Promise<Change[]>;

export function writer(storage: Storage, service: Service): Write {
  return async (batch) => {
    const changes = await storage.applyMirror(batch);
    service.announce(changes);
    return changes;
  };
}
