/** A Storage whose calls wait for an asynchronously opened Storage. */
import type { Storage } from './storage.js';

export function lazyStorage(opening: Promise<Storage>): Storage {
  // A failed open is reported by every call, not as an unhandled rejection.
  opening.catch(() => {});
  return new Proxy({} as Storage, {
    get(_target, key: keyof Storage) {
      if (key === 'close') return () => void opening.then((s) => s.close(), () => {});
      return async (...args: unknown[]) => {
        const storage = await opening;
        return (storage[key] as (...a: unknown[]) => unknown)(...args);
      };
    },
  });
}
