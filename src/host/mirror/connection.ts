/**
 * Reaching the upstream: finding it (its health check, or for `'auto'` the first candidate that
 * answers) and checking who it is (adopting another Pieces OS, or the first one). The loop
 * (loop.ts) calls it; whether and when is the loop's.
 */
import { SYNCED } from './follower.js';
import type { MirrorMachine } from './machine.js';
import { UpstreamError, type Upstream } from './upstream.js';
import type { Write } from './write.js';

const META_IDENTITY = 'mirror:identity';

export class Connection {
  constructor(
    private readonly machine: MirrorMachine,
    private readonly upstream: Upstream,
    private readonly storage: { getMeta<T>(key: string): Promise<T | undefined> },
    private readonly write: Write,
    private readonly warn: (message: string) => void,
    /** `'auto'`: the upstream is found among `candidates` (the last one found first), else it is the one given. */
    private readonly auto: boolean,
    private readonly candidates: readonly string[],
  ) {}

  /** The base that answers its health check; an UpstreamError when none does. */
  async find(): Promise<string> {
    const base = this.machine.base;
    const found = this.auto
      ? await this.upstream.discover(base ? [base, ...this.candidates.filter((c) => c !== base)] : this.candidates)
      : (await this.upstream.healthy(base!))
        ? base
        : null;
    if (!found)
      throw new UpstreamError(
        'network',
        this.auto ? 'no Pieces OS answers on localhost (39300–39333, 1000, 5323)' : `${base} does not answer its health check`,
      );
    return found;
  }

  /**
   * Checks who the upstream at `base` is, with the outbox read again; true when it is another
   * Pieces OS than the one mirrored (or the first one), adopted: what was mirrored from the
   * previous one is dropped, the records created here and still queued are kept, and the outbox
   * is replayed to it once (an entry sent to the previous one is sent again, not looked for).
   */
  async identify(base: string): Promise<boolean> {
    const { machine } = this;
    const identity = await this.upstream.identity(base);
    machine.outboxChanged();
    await machine.reload();
    const previous = await this.storage.getMeta<string>(META_IDENTITY);
    if (previous === identity) return false;
    const replaced = previous !== undefined;
    // What the queue created here is kept by the replace itself (read in its transaction).
    await this.write({
      clearIdMap: true,
      replace: { kinds: [...SYNCED], keep: [] },
      outbox: { put: replaced ? machine.entries.filter((e) => e.state === 'sent').map((e) => ({ ...e, state: 'queued' as const })) : [] },
      meta: { [META_IDENTITY]: identity },
    });
    machine.idMapCleared();
    if (replaced)
      this.warn(
        `the mirrored Pieces OS is another one now (identity ${identity}): the records mirrored from the previous one were dropped, and the queued operations are replayed to this one.`,
      );
    machine.outboxChanged();
    await machine.reload();
    return true;
  }
}
