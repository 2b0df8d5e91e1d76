/** Where every time and id the service records comes from (settable by hosts: `now`, `newId`). */
export interface Clock {
  now(): Date;
  newId(): string;
}

/** The clock with its time stopped now: every record one request writes carries the same time. */
export function atOnce(clock: Clock): Clock {
  const now = clock.now();
  return { now: () => now, newId: clock.newId };
}
