/** What several handler groups share: the `transferables` rule, the clock and change publishing. */
import type { OperationContext } from '../context.js';
import { badRequest, clip } from '../http.js';
import { atOnce, type Clock } from '../clock.js';
import type { ActivityRecord, Change } from '../../storage/storage.js';

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

/**
 * Records activities of conversations after the conversation's own write (its transaction is
 * the conversations' group commit): activities that arrive while one write of them is under
 * way are written together in the next, each request answered once its activity is stored.
 */
const activityWriters = new WeakMap<object, (activity: ActivityRecord) => Promise<void>>();

export function recordActivity(context: OperationContext, activity: ActivityRecord): Promise<void> {
  const { service } = context;
  let write = activityWriters.get(service);
  if (!write) {
    let waiting: Array<{ activity: ActivityRecord; done(error?: unknown): void }> = [];
    let writing = false;
    const drain = async () => {
      writing = true;
      while (waiting.length) {
        const group = waiting;
        waiting = [];
        try {
          for (const change of await service.storage.recordActivities(group.map((item) => item.activity))) service.notify(change);
          for (const item of group) item.done();
        } catch (error) {
          for (const item of group) item.done(error);
        }
      }
      writing = false;
    };
    write = (activity) =>
      new Promise<void>((resolve, reject) => {
        waiting.push({ activity, done: (error) => (error === undefined ? resolve() : reject(error)) });
        if (!writing) void drain();
      });
    activityWriters.set(service, write);
  }
  return write(activity);
}
