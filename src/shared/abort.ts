/**
 * `promise`'s outcome, or a rejection with `signal`'s reason if it aborts first (at once if it
 * has): what waits on `promise` stops waiting, whether or not the work behind it heeds the signal.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const aborted = () => reject(signal.reason);
    if (signal.aborted) aborted();
    else signal.addEventListener('abort', aborted, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', aborted));
  });
}
