/**
 * Model downloads in progress, and the progress frames (ModelDownloadProgress)
 * their sockets carry: INITIALIZED, then IN-PROGRESS with the percentage (at
 * most `FRAMES_PER_SECOND` a second, the latest figure each time), then
 * COMPLETED once the download is kept, or FAILED, or CANCELED.
 */
import type { ModelDownloadProgressStatus } from '../enums.js';
import type { Pull } from './model.js';

/** Most IN-PROGRESS frames a download sends a second. */
export const FRAMES_PER_SECOND = 60;

export interface ProgressFrame {
  status: ModelDownloadProgressStatus;
  percentage?: number;
}

type Listener = (frame: ProgressFrame) => void;

interface Running {
  controller: AbortController;
  /** The last frame sent. */
  last: ProgressFrame;
}

export class Downloads {
  readonly #listeners = new Map<string, Set<Listener>>();
  readonly #running = new Map<string, Running>();
  readonly #interval: number;

  constructor(framesPerSecond = FRAMES_PER_SECOND) {
    this.#interval = 1000 / framesPerSecond;
  }

  /** Hears the progress frames of a model's downloads; returns the way to stop hearing them. */
  subscribe(id: string, listener: Listener): () => void {
    let set = this.#listeners.get(id);
    if (!set) this.#listeners.set(id, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#listeners.get(id) === set) this.#listeners.delete(id);
    };
  }

  /** Whether a download of the model is running. */
  running(id: string): boolean {
    return this.#running.has(id);
  }

  /** The last frame of the model's running download, for a socket that opens while it runs. */
  current(id: string): ProgressFrame | undefined {
    return this.#running.get(id)?.last;
  }

  #send(id: string, frame: ProgressFrame) {
    const running = this.#running.get(id);
    if (running) running.last = frame;
    for (const listener of this.#listeners.get(id) ?? []) listener(frame);
  }

  /**
   * Runs a download of the model: `pull` fetches it (none: nothing to fetch), `keep` records
   * it as downloaded, then COMPLETED goes out. Resolves once it ended (whichever way); a
   * download of a model already running is not started again (false).
   */
  async run(id: string, pull: Pull | undefined, keep: () => Promise<void>): Promise<boolean> {
    if (this.#running.has(id)) return false;
    const controller = new AbortController();
    this.#running.set(id, { controller, last: { status: 'INITIALIZED', percentage: 0 } });
    this.#send(id, { status: 'INITIALIZED', percentage: 0 });
    let sentAt = 0;
    let pending: number | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    /** Sends the latest figure if a frame interval has passed since the last one, else schedules it. */
    const flush = () => {
      clearTimeout(timer);
      timer = undefined;
      if (pending === undefined || controller.signal.aborted) return;
      const wait = sentAt + this.#interval - performance.now();
      // Timers take whole milliseconds (a shorter delay would run early): rounded up.
      if (wait > 0) {
        timer = setTimeout(flush, Math.ceil(wait));
        return;
      }
      sentAt = performance.now();
      this.#send(id, { status: 'IN-PROGRESS', percentage: pending });
      pending = undefined;
    };
    // The highest percentage given so far: a pull's fraction falls when a layer it had not seen
    // starts (Ollama reports each layer's total only then), and a progress bar never goes back.
    let highest = 0;
    const progress = (fraction: number) => {
      if (controller.signal.aborted) return;
      const percentage = Math.round(Math.min(Math.max(fraction, 0), 1) * 1000) / 10;
      if (percentage <= highest && sentAt > 0) return;
      highest = Math.max(highest, percentage);
      pending = highest;
      if (timer === undefined) flush();
    };
    try {
      if (pull) await pull(controller.signal, progress);
      clearTimeout(timer);
      if (controller.signal.aborted) throw controller.signal.reason;
      await keep();
      this.#send(id, { status: 'COMPLETED', percentage: 100 });
    } catch {
      clearTimeout(timer);
      this.#send(id, controller.signal.aborted ? { status: 'CANCELED' } : { status: 'FAILED' });
    } finally {
      this.#running.delete(id);
    }
    return true;
  }

  /** Stops the model's running download (it ends CANCELED); false when none runs. */
  cancel(id: string): boolean {
    const running = this.#running.get(id);
    if (!running) return false;
    running.controller.abort(new DOMException('The download was canceled.', 'AbortError'));
    return true;
  }

  /** Stops every running download (the whole store was replaced). */
  cancelAll(): void {
    for (const id of [...this.#running.keys()]) this.cancel(id);
  }
}
