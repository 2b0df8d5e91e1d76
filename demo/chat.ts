/**
 * The demo's copilot pane: a chat on the open conversation over the
 * /qgpt/stream socket (ask, watch the answer stream in, stop it), and the
 * model setting (no model, or an OpenAI-compatible endpoint such as a local
 * Ollama), switched in the worker through the page API.
 */
import { getModel, setModel, type ModelConfig } from 'pieces-os-worker';
import { $, h } from './dom.js';
import { randomUUID } from './uuid.js';

interface Frame {
  request?: string;
  conversation: string;
  status: 'INITIALIZED' | 'IN-PROGRESS' | 'COMPLETED' | 'FAILED' | 'STOPPED' | 'RESET' | string;
  question?: { answers: { iterable: Array<{ text: string }> } };
  errorMessage?: string;
}

interface StoredMessage {
  role: string;
  fragment?: { string?: { raw?: string } };
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
  let conversation: string | null = null;
  let running: { request: string; bubble: HTMLElement } | null = null;

  const bubble = (role: string, text: string) => {
    const element = h('li', { class: `bubble ${role.toLowerCase()}`, dataset: { role } }, h('span', { class: 'role' }, role.toLowerCase()), h('p', {}, text));
    log.append(element);
    element.scrollIntoView({ block: 'nearest' });
    return element.querySelector('p')!;
  };
  const setState = (value: string, text: string) => {
    state.dataset.state = value;
    state.textContent = text;
    ask.disabled = value === 'streaming';
    stop.disabled = value !== 'streaming';
  };

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
    const { bubble: answer } = running;
    // A question without a conversation gets a new one, stored once the answer ends (completed,
    // stopped or reset; a failed one stores nothing): its frames name it.
    if (!conversation && frame.conversation && ['COMPLETED', 'STOPPED', 'RESET'].includes(frame.status)) {
      conversation = frame.conversation;
      title.textContent = 'New conversation';
    }
    if (frame.status === 'IN-PROGRESS') {
      answer.textContent += frame.question?.answers.iterable[0]?.text ?? '';
      answer.parentElement!.scrollIntoView({ block: 'nearest' });
      return;
    }
    running = null;
    answer.parentElement!.dataset.status = frame.status;
    if (frame.status === 'FAILED') {
      answer.parentElement!.classList.add('fail');
      answer.textContent = frame.errorMessage ?? 'The answer failed.';
      setState('failed', 'failed: nothing was stored');
    } else if (frame.status === 'STOPPED' || frame.status === 'RESET') {
      setState('stopped', 'stopped: the question and the answer so far were stored');
    } else {
      setState('done', 'answered');
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
      bubble('USER', query);
      running = { request, bubble: bubble('ASSISTANT', '') };
      running.bubble.parentElement!.dataset.request = request;
      question.value = '';
      setState('streaming', 'answering…');
      open.send(JSON.stringify({ request, ...(conversation ? { conversation } : {}), question: { query, relevant: { iterable: [] } } }));
    })().catch(showError);
  });
  stop.addEventListener('click', () => {
    if (running) socket?.send(JSON.stringify({ request: running.request, stop: true }));
  });

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
      title.textContent = name;
      const response = await fetch(`${base}/conversation/${id}/messages`);
      if (!response.ok) throw new Error(await response.text());
      const { iterable } = (await response.json()) as { iterable: StoredMessage[] };
      log.replaceChildren();
      for (const message of iterable) bubble(message.role, message.fragment?.string?.raw ?? '');
      setState('idle', `${iterable.length} message${iterable.length === 1 ? '' : 's'}`);
    },
  };
}
