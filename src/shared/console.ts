/** The library's console lines, every one prefixed `[pieces-os-worker]`. */
export const PREFIX = '[pieces-os-worker]';

/** Prints `message` (then `more`, as the console prints them) at `level`, prefixed. */
export function say(level: 'log' | 'info' | 'warn' | 'error', message: string, ...more: unknown[]): void {
  console[level](`${PREFIX} ${message}`, ...more);
}
