/**
 * The conversation pane: one conversation read with GET /conversation/{id},
 * its messages (add, edit, delete) and its name (rename, or a name from the
 * messages). The copilot pane follows the conversation shown here.
 */
import type { ServiceWatch } from 'pieces-os-worker';
import { ApiError, type Api } from './api.js';
import type { Chat } from './chat.js';
import { $, h, plural, when } from './dom.js';
import type { Errors } from './errors.js';
import type { Conversation, Message } from './types.js';

export interface ConversationPane {
  /** The id of the conversation shown, if any. */
  readonly shown: string | undefined;
  /** Reads the conversation and shows it. */
  open(id: string): Promise<void>;
  /** Shows a conversation already read. */
  render(conversation: Conversation): void;
  /** Hides the pane. */
  hide(): void;
  /** Marks the shown conversation's item of the list. */
  markShown(): void;
  /** The stream reports changes: hides the pane if its conversation is deleted, notes it is stale if it changed. */
  changed(items: ReadonlyArray<{ conversation: { id: string }; deleted?: true }>): void;
  /** Reads the shown conversation again if it is stale (not while a message is being edited). */
  refreshIfStale(): void;
}

export function mountConversation(api: Api, chat: Promise<Chat>, { act, show: showError }: Errors, watch: ServiceWatch): ConversationPane {
  /** The conversation in the pane, if any. */
  let shown: string | undefined;
  /** The message being edited: the pane is not redrawn under the editor. */
  let editing: string | undefined;
  let stale = false;
  /** The conversation the copilot pane is on. */
  let chatOn: string | undefined;

  function markShown() {
    for (const item of $('#conversation-list').children) item.toggleAttribute('aria-current', (item as HTMLElement).dataset.id === shown);
  }

  function hide() {
    shown = undefined;
    editing = undefined;
    $('#conversation-detail').hidden = true;
    markShown();
  }

  async function open(id: string) {
    shown = id;
    editing = undefined;
    const { value } = await api.get<Conversation>(`/conversation/${id}`);
    if (shown === id) render(value);
  }

  /** Reads the shown conversation again after a change (unless a message is being edited). */
  async function reread() {
    if (!shown) return;
    if (editing) {
      stale = true;
      return;
    }
    stale = false;
    await open(shown).catch((error) => {
      if (error instanceof ApiError && error.status === 404) hide();
      else throw error;
    });
  }

  /**
   * Shows a conversation. The name field keeps what is being typed into it,
   * unless `renamed`: the name is the one the user just asked for (a click on a
   * button does not always take the focus from the field: Safari, Enter).
   */
  function render(conversation: Conversation, renamed = false) {
    shown = conversation.id;
    if (chatOn !== conversation.id) {
      chatOn = conversation.id;
      void chat.then((c) => c.open(conversation.id, conversation.name ?? 'Untitled')).catch(showError);
    }
    const rename = $<HTMLInputElement>('#rename-name');
    if (renamed || document.activeElement !== rename) rename.value = conversation.name ?? '';
    const count = conversation.messages.iterable.length;
    $('#detail-meta').textContent =
      `${plural(count, 'message')} · created ${when(conversation.created)} · updated ${when(conversation.updated)}`;
    $('#message-list').replaceChildren(
      ...conversation.messages.iterable.map((message) => renderMessage(message)),
      ...(count === 0 ? [h('li', { class: 'muted' }, '(no messages)')] : []),
    );
    $('#conversation-detail').hidden = false;
    markShown();
  }

  function renderMessage({ id, reference }: Message) {
    if (!reference) return h('li', { dataset: { id } }, `message ${id} (text not sent)`);
    const text = h('span', { class: 'text' }, reference.fragment?.string?.raw ?? '');
    const edit = h('button', { type: 'button', class: 'link', 'aria-label': 'edit message' }, 'edit');
    const remove = h('button', { type: 'button', class: 'danger small', 'aria-label': 'delete message' }, 'delete');
    const item = h(
      'li',
      { dataset: { id, role: reference.role } },
      h('span', { class: 'role' }, `[${reference.role}] `),
      text,
      h('span', { class: 'actions' }, edit, remove),
    );
    remove.addEventListener(
      'click',
      act(async () => {
        await api.post(`/messages/${id}/delete`);
      }),
    );
    edit.addEventListener('click', () => {
      editing = id;
      const area = h('textarea', { class: 'edit', rows: '3', 'aria-label': 'message text' });
      area.value = reference.fragment?.string?.raw ?? '';
      const save = h('button', { type: 'submit', class: 'small' }, 'save');
      const cancel = h('button', { type: 'button', class: 'secondary small' }, 'cancel');
      const form = h('form', { class: 'row edit-form' }, area, save, cancel);
      const done = () => {
        editing = undefined;
        form.replaceWith(text);
        if (stale) void reread().catch(showError);
      };
      cancel.addEventListener('click', done);
      form.addEventListener('submit', (event) => {
        event.preventDefault();
        act(async () => {
          // messageUpdateValue: the message as read, with its new text.
          await api.post('/message/update/value', { ...reference, fragment: { string: { raw: area.value } } });
          stale = true;
          done();
        })(event);
      });
      text.replaceWith(form);
      area.focus();
    });
    return item;
  }

  $('#message-form').addEventListener('submit', (event) => {
    event.preventDefault();
    act(async () => {
      const text = $<HTMLTextAreaElement>('#message-text');
      if (!text.value.trim()) throw new Error('Write the message first.');
      await api.post('/messages/create', {
        conversation: { id: shown },
        role: $<HTMLSelectElement>('#message-role').value,
        fragment: { string: { raw: text.value } },
      });
      text.value = '';
    })(event);
  });

  $('#rename-form').addEventListener('submit', (event) => {
    event.preventDefault();
    act(async () => {
      // conversationUpdate takes the whole conversation: read it, change the name, send it back.
      const { value } = await api.get<Conversation>(`/conversation/${shown}`);
      const name = $<HTMLInputElement>('#rename-name').value.trim();
      const { name: _old, messages: _messages, ...rest } = value;
      render((await api.post<Conversation>('/conversation/update', name ? { ...rest, name } : rest)).value, true);
    })(event);
  });
  $('#auto-name').addEventListener(
    'click',
    act(async () => {
      render((await api.post<Conversation>(`/conversation/${shown}/rename`)).value, true);
    }),
  );

  // Recovered: what the pane shows may be stale.
  watch.addEventListener('statechange', () => {
    if (watch.state === 'lost' || !shown) return;
    stale = true;
    void reread().catch(showError);
  });

  return {
    get shown() {
      return shown;
    },
    open(id) {
      // Opened by the user: the copilot pane goes there too, even if it had left it for a new chat.
      chatOn = undefined;
      return open(id);
    },
    render: (conversation) => render(conversation),
    hide,
    markShown,
    changed(items) {
      const mine = items.find((item) => item.conversation.id === shown);
      if (mine?.deleted) hide();
      else if (mine) stale = true;
    },
    refreshIfStale() {
      if (stale) void reread().catch(showError);
    },
  };
}
