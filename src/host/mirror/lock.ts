/**
 * The replayer's lock over Web Locks: one host of an origin (the worker, or one tab in page
 * mode) replays the outbox and follows the upstream; when it goes away (a tab closed, a
 * worker stopped), the browser gives the lock to the next host waiting for it.
 */
export type HoldLock = (name: string, hold: () => Promise<void>) => void;

/** The lock over `locks` (a page's or a worker's `navigator.locks`); undefined where there are none (then the host replays at once). */
export function webLock(locks: LockManager | undefined): HoldLock | undefined {
  if (!locks) return undefined;
  return (name, hold) => {
    // Refused (an opaque origin, a sandboxed frame): this host replays without it.
    locks.request(name, hold).catch(() => void hold());
  };
}
