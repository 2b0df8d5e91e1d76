/** The few Service Worker types the host uses (the DOM lib has no ServiceWorkerGlobalScope). */
export interface ExtendableEventLike extends Event {
  waitUntil(promise: Promise<unknown>): void;
}
export interface FetchEventLike extends ExtendableEventLike {
  readonly request: Request;
  respondWith(response: Promise<Response> | Response): void;
}
export interface ExtendableMessageEventLike extends ExtendableEventLike {
  readonly data: unknown;
  readonly ports: readonly MessagePort[];
}
export interface ServiceWorkerScope {
  readonly location: { href: string };
  /** Web Locks, where the browser has them. */
  readonly navigator?: { readonly locks?: LockManager };
  readonly clients: { claim(): Promise<void> };
  skipWaiting(): Promise<void>;
  addEventListener(type: 'install', listener: (event: ExtendableEventLike) => void): void;
  addEventListener(type: 'activate', listener: (event: ExtendableEventLike) => void): void;
  addEventListener(type: 'fetch', listener: (event: FetchEventLike) => void): void;
  addEventListener(type: 'message', listener: (event: ExtendableMessageEventLike) => void): void;
}
