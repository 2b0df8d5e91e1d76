/**
 * The demo's copilot pane: a chat on the open conversation over the
 * /qgpt/stream socket (ask, watch the answer stream in, stop it), and the
 * model setting (no model, or an OpenAI-compatible endpoint such as a local
 * Ollama), switched in the worker through the page API. Answers are shown as
 * Markdown; "New chat" leaves the conversation; the pane follows its
 * conversation in the store (renamed or deleted elsewhere) through the
 * conversations stream.
 */
import { getModel, setModel, type ModelConfig } from 'pieces-os-worker';
import { $, h } from './dom.js';
import { showMarkdown } from './markdown.js';
import { randomUUID } from './uuid.js';

interface Frame {
  request?: string;
  conversation: string;
  status: 'INITIALIZED' | 'IN-PROGRESS' | 'COMPLETED' | 'FAILED' | 'STOPPED' | 'RESET' | string;
  question?: { answers: { iterable: Array<{ text: string }> } };
  errorMessage?: string;
}

interface StoredConversation {
  name?: string;
  messages: { iterable: Array<{ reference?: { role: string; fragment?: { string?: { raw?: string } } } }> };
}

export interface Chat {
  /** Shows a conversation's messages and makes it the one questions go to. */
  open(id: string, name: string): Promise<void>;
}

export async function startChat(base: string, showError: (error: unknown) => void, onAnswered: () => void): Promise<Chat> {
  const log = $('#chat-log');
  const title = $('#chat-title');
  const state = $('#chat-state');
  const question = $<HTMLTextAreaElement>('#chat-question');
  const ask = $<HTMLButtonElement>('#chat-ask');
  const stop = $<HTMLButtonElement>('#chat-stop');
  const newChat = $<HTMLButtonElement>('#chat-new');
  /**
   * The stored conversation questions go to; null for a new chat, whose
   * conversation the service creates with the first answer it stores.
   */
  let conversation: string | null = null;
  let running: { request: string; query: string; text: HTMLElement; answer: string; conversation: string | null } | null = null;
  /** The conversation changed in the store while an answer ran: read it again once the answer ends. */
  let stale = false;
  /**
   * The stored messages the log shows, in order (role and text; failed answers shown
   * beside them are not stored); null: the log must be drawn from the store.
   */
  let shown: string[] | null = [];
  const key = (role: string, raw: string) => `${role}\n${raw}`;

  /** Runs a change of the log; the log then shows its newest message if it did before (or `always`). */
  const scrolling = (change: () => void, always = false) => {
    const atEnd = log.scrollHeight - log.scrollTop - log.clientHeight < 8;
    change();
    if (always || atEnd) log.scrollTop = log.scrollHeight;
  };
  /** A message: the user's as typed, an answer (or a system message) as Markdown. */
  const render = (text: HTMLElement, role: string, raw: string) => (role === 'USER' ? (text.textContent = raw) : showMarkdown(text, raw));
  const bubble = (role: string, raw: string) => {
    const text = h('div', { class: 'text' });
    render(text, role, raw);
    log.append(
      h('li', { class: `bubble ${role.toLowerCase()}`, dataset: { role } }, h('span', { class: 'role' }, role.toLowerCase()), text),
    );
    return text;
  };
  const setState = (value: string, text: string) => {
    state.dataset.state = value;
    state.textContent = text;
    ask.disabled = value === 'streaming';
    stop.disabled = value !== 'streaming';
    newChat.disabled = value === 'streaming';
  };

  /** Leaves the conversation: the next question starts a new one. */
  function leave(why: string) {
    conversation = null;
    stale = false;
    shown = [];
    title.textContent = 'new conversation';
    log.replaceChildren();
    setState('idle', why);
  }

  /** Reads the conversation from the store: its name and its messages (a deleted one is left). */
  async function reread() {
    const id = conversation;
    if (!id) return;
    const response = await fetch(`${base}/conversation/${id}`);
    if (conversation !== id) return;
    if (response.status === 404) return leave('the conversation was deleted: a new chat');
    if (!response.ok) throw new Error(await response.text());
    const { name, messages } = (await response.json()) as StoredConversation;
    if (conversation !== id) return;
    if (running) {
      stale = true;
      return;
    }
    title.textContent = name ?? 'Untitled';
    const stored = messages.iterable.flatMap(({ reference }) =>
      reference ? [{ role: reference.role, raw: reference.fragment?.string?.raw ?? '' }] : [],
    );
    const keys = stored.map(({ role, raw }) => key(role, raw));
    // Drawn again only when the store holds other messages than those shown (written elsewhere).
    if (shown?.join('\0') !== keys.join('\0')) {
      shown = keys;
      scrolling(() => {
        log.replaceChildren();
        for (const { role, raw } of stored) bubble(role, raw);
      }, true);
    }
    return stored.length;
  }

  let socket: WebSocket | null = null;
  const connect = () =>
    new Promise<WebSocket>((resolve, reject) => {
      if (socket && socket.readyState === WebSocket.OPEN) return resolve(socket);
      const next = new WebSocket(`${base.replace(/^http/, 'ws')}/qgpt/stream`);
      next.addEventListener('open', () => resolve(next), { once: true });
      next.addEventListener('error', () => reject(new Error('The copilot stream could not be opened.')), { once: true });
      next.addEventListener('close', () => (socket = socket === next ? null : socket));
      next.addEventListener('message', (event) => receive(JSON.parse(event.data as string) as Frame));
      socket = next;
    });

  function receive(frame: Frame) {
    if (!running || frame.request !== running.request) return;
    const current = running;
    if (frame.status === 'IN-PROGRESS') {
      current.answer += frame.question?.answers.iterable[0]?.text ?? '';
      scrolling(() => render(current.text, 'ASSISTANT', current.answer));
      return;
    }
    running = null;
    const item = current.text.parentElement!;
    item.dataset.status = frame.status;
    if (frame.status === 'FAILED') {
      // Nothing was stored: a new chat stays one (the conversation the service named was never created).
      scrolling(() => {
        item.classList.add('fail');
        current.text.textContent = frame.errorMessage ?? 'The answer failed.';
      }, true);
      setState('failed', 'failed: nothing was stored');
      if (!conversation) title.textContent = 'new conversation';
    } else {
      // Stored: a question sent with no conversation created this one, which questions now go to.
      if (!current.conversation && !conversation) {
        conversation = frame.conversation;
        stale = true;
      }
      if (conversation === frame.conversation)
        shown?.push(key('USER', current.query), ...(current.answer ? [key('ASSISTANT', current.answer)] : []));
      scrolling(() => {}, true);
      if (frame.status === 'STOPPED' || frame.status === 'RESET')
        setState('stopped', 'stopped: the question and the answer so far were stored');
      else setState('done', 'answered');
    }
    if (stale) {
      stale = false;
      void reread().catch(showError);
    }
    onAnswered();
  }

  $<HTMLFormElement>('#chat-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const query = question.value.trim();
    if (!query || running) return;
    void (async () => {
      const open = await connect();
      const request = randomUUID();
      scrolling(() => {
        bubble('USER', query);
        running = { request, query, text: bubble('ASSISTANT', ''), answer: '', conversation };
      }, true);
      running!.text.parentElement!.dataset.request = request;
      question.value = '';
      setState('streaming', 'answering…');
      open.send(JSON.stringify({ request, ...(conversation ? { conversation } : {}), question: { query, relevant: { iterable: [] } } }));
    })().catch(showError);
  });
  stop.addEventListener('click', () => {
    if (running) socket?.send(JSON.stringify({ request: running.request, stop: true }));
  });
  newChat.addEventListener('click', () => {
    if (!running) leave('new chat: the first answer stored starts a conversation');
  });

  // The pane follows its conversation in the store: a delete on the conversations stream
  // leaves it; any other message that names it (a rename, a message written elsewhere),
  // and each first message (a snapshot, after a reconnection too), reads it again.
  const follow = () => {
    const stream = new WebSocket(`${base.replace(/^http/, 'ws')}/conversations/stream/identifiers`);
    let snapshot = true;
    stream.addEventListener('message', (event) => {
      const { iterable } = JSON.parse(event.data as string) as { iterable: Array<{ conversation: { id: string }; deleted?: true }> };
      const mine = iterable.find((item) => item.conversation.id === conversation);
      const first = snapshot;
      snapshot = false;
      if (!conversation || !(mine || first)) return;
      if (running) stale = true;
      else if (mine?.deleted) leave('the conversation was deleted: a new chat');
      else void reread().catch(showError);
    });
    stream.addEventListener('close', () => setTimeout(follow, 1000), { once: true });
  };
  follow();

  // The model setting.
  const kind = $<HTMLSelectElement>('#model-kind');
  const endpoint = $('#model-endpoint');
  const current = $('#model-current');
  const showKind = () => (endpoint.hidden = kind.value !== 'openai');
  kind.addEventListener('change', showKind);
  $<HTMLFormElement>('#model-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const config: ModelConfig =
      kind.value === 'openai'
        ? {
            type: 'openai',
            baseUrl: $<HTMLInputElement>('#model-base-url').value.trim(),
            model: $<HTMLInputElement>('#model-name').value.trim(),
            ...($<HTMLInputElement>('#model-key').value ? { apiKey: $<HTMLInputElement>('#model-key').value } : {}),
          }
        : { type: 'extractive' };
    setModel(config).then((description) => (current.textContent = description), showError);
  });
  current.textContent = await getModel();
  showKind();
  setState('idle', 'ask about your stored code');

  return {
    async open(id, name) {
      if (running) return;
      conversation = id;
      stale = false;
      shown = null;
      title.textContent = name;
      const count = await reread();
      if (count !== undefined) setState('idle', `${count} message${count === 1 ? '' : 's'}`);
    },
  };
}
