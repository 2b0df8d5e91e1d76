/** What several handler groups share: the `transferables` rule, the clock and change publishing. */
import type { OperationContext } from '../context.js';
import { badRequest, clip } from '../http.js';
import { atOnce, type Clock } from '../clock.js';
import type { Change } from '../../storage/storage.js';

/** `transferables`: absent means true; only "true" and "false" are accepted. */
export function transferables(url: URL): boolean {
  const values = url.searchParams.getAll('transferables');
  if (values.length === 0) return true;
  if (values.length === 1 && (values[0] === 'true' || values[0] === 'false')) return values[0] === 'true';
  throw badRequest(`The transferables query parameter must be true or false; got ${clip(JSON.stringify(values.join(',')))}.`);
}

export function clock({ service }: OperationContext): Clock {
  return atOnce(service.clock);
}

/** Announces committed changes, in commit order. */
export function publish({ service }: OperationContext, changes: readonly Change[]): void {
  for (const change of changes) service.notify(change);
}
