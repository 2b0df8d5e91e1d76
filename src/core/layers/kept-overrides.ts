/**
 * The overrides kept in the database across restarts: loaded before the first answer (the layer
 * holds every request but discovery's until then), saved on each change.
 */
import type { Override, Overrides } from '../overrides.js';
import type { Layer } from './compose.js';

/** Operations answered at once, even while the database opens (a client's 100 ms health probe on a cold worker). */
const ANSWERED_WITHOUT_DATABASE = new Set(['getWellKnownHealth', 'getWellKnownVersion']);

export interface Keeper {
  load(): Promise<unknown>;
  save(overrides: Override[]): Promise<void>;
}

export function keptOverrides(overrides: Overrides, kept: Keeper): { layer: Layer; save: () => Promise<void> } {
  // Saves follow one another, so the last one written is the list in force.
  let saving = Promise.resolve();
  const save = () => (saving = saving.then(() => kept.save(overrides.list())).catch(() => {}));
  let loading: Promise<void> | null = kept
    .load()
    .then((list) => {
      // Overrides given since the start stay in front of the ones kept.
      if (Array.isArray(list) && list.length) overrides.restore(list);
    })
    .catch(() => {})
    .finally(() => (loading = null));
  const layer: Layer = async (call, next) => {
    if (loading && !ANSWERED_WITHOUT_DATABASE.has(call.operation!)) await loading;
    return next();
  };
  return { layer, save };
}
