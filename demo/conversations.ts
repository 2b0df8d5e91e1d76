/**
 * The conversations list: kept live by the identifiers stream, read with
 * GET /conversations (with or without transferables, and what leaving them out
 * saves), and the form that creates a conversation.
 */
import type { ServiceWatch } from 'pieces-os-worker';
import type { Api } from './api.js';
import type { ConversationPane } from './conversation.js';
import { $, formatBytes, h, plural, when } from './dom.js';
import type { Errors } from './errors.js';
import type { Conversation } from './types.js';

export interface ConversationList {
  /** Opens the live stream (again whenever it closes); resolves once the list was first read. */
  listen(): Promise<void>;
}

export function mountConversations(
  api: Api,
  base: string,
  detail: ConversationPane,
  { act, show: showError }: Errors,
  watch: ServiceWatch,
): ConversationList {
  const transferables = $<HTMLInputElement>('#transferables');
  /** The size of each variant and the store state it was measured on (ids, updates, messages). */
  const sizes: Partial<Record<'true' | 'false', { bytes: number; state: string }>> = {};
  const stateOf = (conversations: Conversation[]) =>
    JSON.stringify(conversations.map((c) => [c.id, c.updated?.value, c.messages.iterable.map((m) => m.id)]));

  /** The response size, and what transferables=false saves when both variants were measured on the same records. */
  function showSizes() {
    const here = sizes[transferables.checked ? 'true' : 'false'];
    let text = here === undefined ? '—' : `response ${formatBytes(here.bytes)}`;
    const { true: full, false: ids } = sizes;
    if (full && ids && full.state === ids.state && full.bytes > 0) {
      const saved = full.bytes - ids.bytes;
      text += ` · transferables=false saves ${formatBytes(saved)} (${((saved / full.bytes) * 100).toFixed(0)}%)`;
    }
    $('#transfer-size').textContent = text;
  }

  async function measure(flag: 'true' | 'false') {
    const { value, call } = await api.get<{ iterable: Conversation[] }>(`/conversations?transferables=${flag}`);
    sizes[flag] = { bytes: call.bytes, state: stateOf(value.iterable) };
    return value.iterable;
  }

  async function refresh() {
    render(await measure(transferables.checked ? 'true' : 'false'));
    showSizes();
  }

  function render(conversations: Conversation[]) {
    if (detail.shown && !conversations.some((c) => c.id === detail.shown)) detail.hide();
    $('#conversation-count').textContent = String(conversations.length);
    $('#conversation-list').replaceChildren(
      ...conversations.map((conversation) => {
        const name = conversation.name ?? 'Untitled';
        const show = h('button', { type: 'button', class: 'link' }, 'show');
        show.addEventListener(
          'click',
          act(() => detail.open(conversation.id)),
        );
        const remove = h('button', { type: 'button', class: 'danger small', 'aria-label': `delete ${name}` }, 'delete');
        remove.addEventListener(
          'click',
          act(async () => {
            await api.post(`/conversations/${conversation.id}/delete`);
            if (detail.shown === conversation.id) detail.hide();
          }),
        );
        const count = conversation.messages.iterable.length;
        return h(
          'li',
          { dataset: { id: conversation.id } },
          h('span', { class: 'name' }, name),
          h('span', { class: 'muted' }, `${plural(count, 'message')} · ${when(conversation.created)}`),
          h('span', { class: 'actions' }, show, remove),
        );
      }),
    );
    detail.markShown();
  }

  $('#create-form').addEventListener('submit', (event) => {
    event.preventDefault();
    act(async () => {
      const name = $<HTMLInputElement>('#create-name').value.trim();
      const text = $<HTMLTextAreaElement>('#create-message').value.trim();
      await api.post(`/conversations/create?transferables=${transferables.checked}`, {
        type: 'COPILOT',
        ...(name ? { name } : {}),
        messages: text ? [{ role: 'USER', fragment: { string: { raw: text } } }] : [],
      });
      $<HTMLFormElement>('#create-form').reset();
    })(event);
  });

  transferables.addEventListener(
    'change',
    act(async () => {
      await refresh();
      await measure(transferables.checked ? 'false' : 'true');
      showSizes();
    }),
  );

  // The live list: the stream's first message and every change refresh it
  // (writes made here too: their change comes back on the stream).
  const streamState = $('#stream-state');
  function showStreamState(state: 'open' | 'closed' | 'stale', text: string) {
    streamState.dataset.state = state;
    streamState.textContent = text;
  }
  let socket: WebSocket | undefined;
  let refreshTimer: ReturnType<typeof setTimeout> | undefined;

  watch.addEventListener('statechange', () => {
    if (watch.state === 'lost') showStreamState('stale', 'not live: the worker is gone');
    // Recovered: a new socket. Closing the old one reads the list again, and the new one's first message is the current snapshot.
    else socket?.close();
  });

  return {
    listen() {
      return new Promise<void>((listed) => {
        function connect() {
          const next = new WebSocket(`${base.replace(/^http/, 'ws')}/conversations/stream/identifiers`);
          socket = next;
          next.addEventListener('open', () => {
            if (watch.state !== 'lost') showStreamState('open', 'live');
          });
          next.addEventListener('message', (event) => {
            const { iterable } = JSON.parse(event.data as string) as { iterable: Array<{ conversation: { id: string }; deleted?: true }> };
            detail.changed(iterable);
            clearTimeout(refreshTimer);
            refreshTimer = setTimeout(() => {
              void refresh().catch(showError).finally(listed);
              detail.refreshIfStale();
            }, 20);
          });
          next.addEventListener('close', () => {
            showStreamState('closed', 'stream closed, reconnecting…');
            // Without the stream the list could miss changes: read it once now.
            void refresh().catch(showError).finally(listed);
            setTimeout(connect, 1000);
          });
        }
        connect();
      });
    },
  };
}
