/**
 * The replayer's lock: one host of an origin (the worker, or one tab in page mode) replays
 * the outbox and follows the upstream; when it goes away (a tab closed, a worker stopped),
 * the next host waiting takes over. Over Web Locks where the browser has them; else (an
 * insecure origin, where page mode runs) over a lease kept in the database, renewed while
 * the holder runs and taken over once it lapses.
 */
import { randomUUID } from '../../shared/uuid.js';
import type { Storage } from '../../storage/storage.js';

/**
 * Runs `hold` once this host holds the lock named `name`. `lost` resolves if the lock is taken
 * away (a lease that lapsed while the tab was frozen); `valid` says whether it is still held
 * now; the promise `hold` returns resolves when the host gives the lock up (it stops).
 */
export type HoldLock = (name: string, hold: (lost: Promise<void>, valid: () => boolean) => Promise<void>) => void;

/** The lock over `locks` (a page's or a worker's `navigator.locks`); undefined where there are none. */
export function webLock(locks: LockManager | undefined): HoldLock | undefined {
  if (!locks) return undefined;
  return (name, hold) => {
    const held = () => hold(new Promise<void>(() => {}), () => true);
    // Refused (an opaque origin, a sandboxed frame): this host holds it alone.
    locks.request(name, held).catch(() => void held());
  };
}

/** How long a lease lasts unless renewed (it is renewed every third of that). */
export const LEASE_MS = 9_000;

interface Lease {
  holder: string;
  until: number;
}

/** A lock over a lease in `storage`'s meta values: for origins without Web Locks. */
export function leaseLock(storage: Storage, leaseMs = LEASE_MS, now = Date.now): HoldLock {
  return (name, hold) => {
    const me = randomUUID();
    const key = `lease:${name}`;
    let until = 0;
    let lose: (() => void) | null = null;
    let stopped = false;
    const renew = async () => {
      if (stopped) return;
      let mine = false;
      try {
        const lease = await storage.updateMeta<Lease>(key, (current) =>
          !current || current.holder === me || current.until < now() ? { holder: me, until: now() + leaseMs } : current,
        );
        mine = lease.holder === me;
        if (mine) until = lease.until;
      } catch {
        mine = false;
      }
      if (mine && !lose && !stopped) {
        const lost = new Promise<void>((resolve) => (lose = resolve));
        void hold(lost, () => until > now()).then(release);
      } else if (!mine && lose) {
        lose();
        lose = null;
      }
    };
    const timer = setInterval(() => void renew(), leaseMs / 3);
    const release = async () => {
      stopped = true;
      clearInterval(timer);
      await storage.updateMeta<Lease>(key, (current) => (current?.holder === me ? { holder: me, until: 0 } : current!)).catch(() => {});
    };
    void renew();
  };
}
