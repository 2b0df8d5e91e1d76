/**
 * Server-sent events made as frames (the socket streams served as POST or GET answers: the copilot's,
 * a model download's progress): an event-stream body, which a reader that can take the frames
 * themselves (the stream shim, in process or over the fast path's port) reads as batches of frame
 * texts instead of bytes that would be encoded, sent, decoded and parsed again. Either way, one reader.
 */

/** The headers of an event stream's answer. */
export const EVENT_STREAM_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-store',
  'Access-Control-Allow-Origin': '*',
};

/** The `data:` lines of `frames`, each its own event. */
export const eventText = (frames: readonly string[]): string => frames.map((frame) => `data: ${frame}\n\n`).join('');

export class EventFrames {
  #batches: string[][] = [];
  #closed = false;
  #wake: (() => void) | null = null;
  #error: unknown = undefined;
  readonly #cancelled: () => void;

  /** `cancelled`: the reader stopped reading (its socket closed); the frames' maker stops. */
  constructor(cancelled: () => void = () => {}) {
    this.#cancelled = cancelled;
  }

  /** Frames made together, sent together (each still its own event). */
  push(frames: string[]): void {
    if (this.#closed || frames.length === 0) return;
    this.#batches.push(frames);
    this.#wake?.();
  }

  /** No more frames: the reader gets what is queued, then the end. */
  close(): void {
    this.#closed = true;
    this.#wake?.();
  }

  /** Every frame queued, in order (those pushed since the last read, together); null once closed and read. */
  async next(): Promise<string[] | null> {
    while (this.#batches.length === 0) {
      if (this.#error !== undefined) throw this.#error;
      if (this.#closed) return null;
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = null;
    }
    const batches = this.#batches;
    this.#batches = [];
    return batches.length === 1 ? batches[0]! : batches.flat();
  }

  /** The frames cannot go on (the connection they came over broke): what is queued is dropped, and the reader gets `error`. */
  fail(error: unknown): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#error = error;
    this.#batches = [];
    this.#wake?.();
  }

  /** The reader stops: what is queued is dropped, and the maker is told. */
  cancel(): void {
    if (this.#closed && this.#batches.length === 0) return;
    this.#closed = true;
    this.#batches = [];
    this.#wake?.();
    this.#cancelled();
  }

  /** The frames as an event-stream body: encoded only as it is read (a high-water mark of 0 reads nothing ahead). */
  body(): ReadableStream<Uint8Array> {
    const encoder = new TextEncoder();
    return new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          const frames = await this.next();
          if (frames === null) controller.close();
          else controller.enqueue(encoder.encode(eventText(frames)));
        },
        cancel: () => this.cancel(),
      },
      { highWaterMark: 0 },
    );
  }
}

/** Responses whose body is made of frames, with them. */
const framed = new WeakMap<Response, EventFrames>();

/** An event-stream response of `frames`, which a host may read as frames (see `framesOf`). */
export function eventStream(frames: EventFrames, init: ResponseInit = { headers: EVENT_STREAM_HEADERS }): Response {
  const response = new Response(frames.body(), init);
  framed.set(response, frames);
  return response;
}

/** The frames an event-stream response was made of, for a host that carries frames: read them or its body, never both. */
export const framesOf = (response: Response): EventFrames | undefined => framed.get(response);
