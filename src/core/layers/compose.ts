/**
 * The service's answer as layers around the route table (as Hono's `compose`, MSW's handler
 * chain): each layer gets the request (`Call`) and `next`, the answer of the layers inside it,
 * and answers itself or with what `next` gives.
 */
import type { Storage } from '../../storage/storage.js';
import type { Clock } from '../clock.js';
import { operationFor, type Operation, type OperationName } from '../routes.js';

/** What one request is answered with, instead of the service's own (a host's per-request storage, e.g. one that queues the write). */
export interface Within {
  storage: Storage;
  /** Where the request's ids and times come from, instead of the service's clock. */
  clock?: Clock;
}

/** One request under a base, as the layers see it. */
export class Call {
  #operation: OperationName | undefined | null = null;
  /** An override answered or delayed it (set by the overrides layer). */
  overridden = false;
  /** The operation that answers it and its path parameters (set by the unmatched layer). */
  route?: { operation: Operation; params: Record<string, string> };

  constructor(
    readonly request: Request,
    readonly url: URL,
    /** The path under the base. */
    readonly path: string,
    readonly within?: Within,
  ) {}

  /** The SDK operation the method and path name, if any (looked up once, when first asked). */
  get operation(): OperationName | undefined {
    if (this.#operation === null) this.#operation = operationFor(this.request.method, this.path);
    return this.#operation;
  }
}

export type Answer = (call: Call) => Promise<Response>;
export type Layer = (call: Call, next: () => Promise<Response>) => Promise<Response>;

/** `layers` around `inner`, the first outermost. */
export const compose = (layers: readonly Layer[], inner: Answer): Answer =>
  layers.reduceRight<Answer>((next, layer) => (call) => layer(call, () => next(call)), inner);
