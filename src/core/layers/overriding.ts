/** The runtime overrides' layer: the first that matches answers, delays or fails the request instead of the service. */
import type { Overrides } from '../overrides.js';
import type { Layer } from './compose.js';

/** `save`: keeps the list in force (see `keptOverrides`). */
export const overriding =
  (overrides: Overrides, save: () => Promise<void>): Layer =>
  async (call, next) => {
    if (!overrides.size) return next();
    const before = overrides.size;
    const outcome = overrides.take(call.request.method, call.path, call.operation);
    if (!outcome) return next();
    call.overridden = true;
    // A used-up `once` is written away before the answer, so that a restart cannot revive it.
    if (overrides.size !== before) await save();
    if (outcome.delay) await new Promise((resolve) => setTimeout(resolve, outcome.delay));
    return outcome.response ? outcome.response() : next();
  };
