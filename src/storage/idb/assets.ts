/** Assets: read by id and by name, written with their changes. */
import type { IDBPDatabase } from 'idb';
import type { PiecesDB } from '../schema.js';
import type { Change, Storage } from '../storage.js';
import { commit, log, queue } from './transactions.js';

export function assetStore(db: IDBPDatabase<PiecesDB>): Pick<Storage, 'getAsset' | 'listAssets' | 'putAssets'> {
  return {
    async getAsset(id) {
      return db.get('assets', id);
    },

    async listAssets() {
      return db.getAllFromIndex('assets', 'by-name');
    },

    async putAssets(assets, outbox) {
      const tx = db.transaction(['assets', 'changes', 'outbox'], 'readwrite');
      const changes: Change[] = [];
      await commit(tx, function* () {
        for (const asset of assets) yield tx.objectStore('assets').put(asset);
        yield log(tx.objectStore('changes'), assets.map(({ id }) => ({ collection: 'asset' as const, id })), changes);
        if (outbox) yield queue(tx.objectStore('outbox'), outbox);
      });
      return changes;
    },
  };
}
