/**
 * An example component: the list of Pieces conversations, kept live by the
 * identifier stream. Framework-free so that the same code runs in Node (its
 * state alone), in jsdom and happy-dom, and in a browser (rendered).
 */

export interface ConversationListState {
  status: 'loading' | 'ready' | 'error';
  names: string[];
  error?: string;
}

export interface ConversationListOptions {
  baseUrl?: string;
  /** Where to render; none in Node. */
  element?: HTMLElement;
  /** The WebSocket class; default the global one (on Node 20, pass `WebSocket` from pieces-os-worker/node). */
  WebSocket?: typeof globalThis.WebSocket;
}

export class ConversationList {
  state: ConversationListState = { status: 'loading', names: [] };
  readonly #base: string;
  readonly #element?: HTMLElement;
  #socket?: WebSocket;
  #listeners = new Set<() => void>();

  constructor(options: ConversationListOptions = {}) {
    this.#base = options.baseUrl ?? 'http://localhost:1000';
    this.#element = options.element;
    const Socket = options.WebSocket ?? globalThis.WebSocket;
    this.#render();
    void this.#load();
    // Any change of a conversation: read the list again.
    this.#socket = new Socket(`${this.#base.replace(/^http/, 'ws')}/conversations/stream/identifiers`);
    let first = true;
    this.#socket.onmessage = () => {
      if (first) first = false;
      else void this.#load();
    };
  }

  /** Resolves once the state satisfies `condition`. */
  until(condition: (state: ConversationListState) => boolean): Promise<ConversationListState> {
    return new Promise((resolve) => {
      const check = () => {
        if (!condition(this.state)) return;
        this.#listeners.delete(check);
        resolve(this.state);
      };
      this.#listeners.add(check);
      check();
    });
  }

  close() {
    this.#socket?.close();
  }

  async #load() {
    try {
      const response = await fetch(`${this.#base}/conversations?transferables=false`);
      if (!response.ok) throw new Error(await response.text());
      const { iterable } = (await response.json()) as { iterable: Array<{ name?: string }> };
      this.#set({ status: 'ready', names: iterable.map((c) => c.name ?? 'Untitled') });
    } catch (error) {
      this.#set({ status: 'error', names: [], error: (error as Error).message });
    }
  }

  #set(state: ConversationListState) {
    this.state = state;
    this.#render();
    for (const listener of [...this.#listeners]) listener();
  }

  #render() {
    const element = this.#element;
    if (!element) return;
    element.dataset.status = this.state.status;
    if (this.state.status === 'loading') element.textContent = 'Loading…';
    else if (this.state.status === 'error') element.textContent = `Could not load conversations: ${this.state.error}`;
    else {
      const list = element.ownerDocument.createElement('ul');
      for (const name of this.state.names) list.append(Object.assign(element.ownerDocument.createElement('li'), { textContent: name }));
      element.replaceChildren(list);
    }
  }
}
