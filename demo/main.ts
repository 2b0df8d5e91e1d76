/**
 * The demo: an API explorer for the service, with no backend running.
 * Everything shown comes from the worker through plain fetch and WebSocket.
 */
import { randomUUID } from '../src/core/uuid.js';
import { DEFAULT_BASES, startPiecesService, watchService } from '../src/page/index.js';
import { ApplicationNameEnum, PlatformEnum } from '../src/core/enums.js';
import { SAMPLE_ASSETS } from '../src/fixtures/sample-assets.js';
import { ApiError, createApi, type Call } from './api.js';
import { startChat } from './chat.js';
import { restrictConnections } from './csp.js';
import { $, formatBytes, h } from './dom.js';

interface Message {
  id: string;
  reference?: { role: string; fragment?: { string?: { raw?: string } } };
}
interface Conversation {
  id: string;
  name?: string;
  created: { value: string };
  messages: { iterable: Message[] };
}
interface Engagement {
  interactions: number;
  keyboard: number;
  installations: number;
  updates: number;
  lastActivity?: { value: string };
}
interface Application {
  id: string;
  name: string;
  version: string;
  platform: string;
  onboarded: boolean;
  privacy: string;
  engagement?: Engagement;
  [key: string]: unknown;
}
interface Session {
  id: string;
  opened: { value: string };
  closed?: { value: string };
  engagement: Engagement;
}

const status = $('#status');
const errorBox = $('#error');
const SESSIONS_KEY = 'pieces-demo-sessions';

function setStatus(state: 'starting' | 'ready' | 'lost' | 'error', text: string) {
  status.dataset.state = state;
  status.textContent = text;
}

const streamState = $('#stream-state');
function showStreamState(state: 'open' | 'closed' | 'stale', text: string) {
  streamState.dataset.state = state;
  streamState.textContent = text;
}

let errorTimer: ReturnType<typeof setTimeout> | undefined;
function showError(error: unknown) {
  errorBox.textContent = error instanceof ApiError ? `${error.status}: ${error.message}` : String((error as Error)?.message ?? error);
  errorBox.hidden = false;
  clearTimeout(errorTimer);
  errorTimer = setTimeout(() => (errorBox.hidden = true), 8000);
}

/** Runs an action from a control, showing the service's message on failure. */
const act = (action: () => Promise<unknown>) => () => void action().catch(showError);

function logCall(call: Call) {
  const log = $('#request-log');
  const ok = call.status < 400;
  const body = call.body.length > 4000 ? `${call.body.slice(0, 4000)}…` : call.body;
  log.prepend(
    h(
      'li',
      { class: ok ? 'ok' : 'fail', dataset: { operation: call.operation, status: String(call.status) } },
      h(
        'details',
        {},
        h(
          'summary',
          {},
          h('span', { class: 'op' }, call.operation),
          h('span', { class: 'method' }, call.method),
          h('code', { class: 'path' }, call.path),
          h('span', { class: 'status' }, String(call.status)),
          h('span', { class: 'ms' }, `${call.ms.toFixed(1)} ms`),
          h('span', { class: 'size' }, formatBytes(call.bytes)),
        ),
        body ? h('pre', {}, prettify(body)) : h('p', { class: 'muted' }, '(no body)'),
      ),
    ),
  );
  while (log.children.length > 200) log.lastElementChild!.remove();
}

function prettify(text: string) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** False in a build made with PIECES_FAST_PATH=off (vite.config.ts). */
declare const __PIECES_FAST_PATH__: boolean;

const when = (timestamp?: { value: string }) => (timestamp ? new Date(timestamp.value).toLocaleTimeString() : '—');

async function main() {
  setStatus('starting', 'Worker starting…');
  // ?bases=<comma-separated URLs> and ?worker=<script URL> explore other set-ups.
  const params = new URLSearchParams(location.search);
  const bases = params.get('bases')?.split(',');
  restrictConnections(bases ?? DEFAULT_BASES);
  const options = {
    // ?fastPath=0 (or a build with PIECES_FAST_PATH=off): every request through the worker's fetch handler.
    fastPath: __PIECES_FAST_PATH__ && params.get('fastPath') !== '0',
    ...(bases ? { bases } : {}),
    ...(params.get('worker') ? { url: params.get('worker')! } : {}),
  };
  const service = await startPiecesService(options);
  const base = service.bases[0]!;
  $('#bases').textContent = service.bases.join(', ');
  const api = createApi(base, logCall);
  // The copilot pane; an answer changes its conversation, so the list refreshes after each.
  const chat = startChat(base, showError, () => scheduleRefresh());
  $('#status').dataset.mode = service.mode;
  const readyText = (worker: string) =>
    service.mode === 'page'
      ? `Offline-ready (in the page: ${service.reason})`
      : worker !== service.version.page
        ? `Offline-ready (worker ${worker} ≠ page ${service.version.page})`
        : 'Offline-ready';
  setStatus('ready', readyText(service.version.worker));

  // The pill follows the service: lost (and started again), recovered (read everything again), another worker version.
  let liveSocket: WebSocket | undefined;
  const watch = watchService(service, () => startPiecesService(options));
  watch.addEventListener('statechange', () => {
    if (watch.state === 'lost') {
      setStatus('lost', `Worker lost: ${watch.reason}`);
      showStreamState('stale', 'not live: the worker is gone');
      return;
    }
    setStatus('ready', `${readyText(watch.workerVersion)} · recovered`);
    status.title = watch.reason;
    // A new socket: its first message is the current snapshot.
    liveSocket?.close();
    void refreshConversations();
    void refreshApplications();
  });
  watch.addEventListener('versionchange', () => setStatus('ready', readyText(watch.workerVersion)));

  // Conversations ----------------------------------------------------------
  const transferables = $<HTMLInputElement>('#transferables');
  const sizes: Partial<Record<'true' | 'false', number>> = {};
  let refreshTimer: ReturnType<typeof setTimeout> | undefined;

  function showSizes() {
    const current = transferables.checked ? 'true' : 'false';
    const other = current === 'true' ? 'false' : 'true';
    const here = sizes[current];
    const there = sizes[other];
    let text = here === undefined ? '—' : `response ${formatBytes(here)}`;
    if (here !== undefined && there !== undefined && sizes.true) {
      const saved = 1 - (sizes.false ?? 0) / sizes.true;
      text += ` · transferables=false saves ${formatBytes(sizes.true - (sizes.false ?? 0))} (${(saved * 100).toFixed(0)}%)`;
    }
    $('#transfer-size').textContent = text;
  }

  async function refreshConversations() {
    const flag = transferables.checked ? 'true' : 'false';
    const { value, call } = await api.get<{ iterable: Conversation[] }>(`/conversations?transferables=${flag}`);
    sizes[flag] = call.bytes;
    renderConversations(value.iterable);
    showSizes();
  }
  const scheduleRefresh = () => {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(act(refreshConversations), 20);
  };

  function showDetail(title: string, conversation: Conversation) {
    const detail = $('#conversation-detail');
    const lines = [title, ''];
    for (const message of conversation.messages.iterable) {
      lines.push(
        message.reference
          ? `[${message.reference.role}] ${message.reference.fragment?.string?.raw ?? ''}`
          : `message ${message.id} (transferables=false: text not sent)`,
      );
    }
    if (conversation.messages.iterable.length === 0) lines.push('(no messages)');
    detail.textContent = lines.join('\n');
    detail.hidden = false;
    void chat.then((c) => c.open(conversation.id, title)).catch(showError);
  }

  function renderConversations(conversations: Conversation[]) {
    $('#conversation-count').textContent = String(conversations.length);
    const list = $('#conversation-list');
    list.replaceChildren(
      ...conversations.map((conversation) => {
        const name = conversation.name ?? 'Untitled';
        const show = h('button', { type: 'button', class: 'link' }, 'show');
        show.addEventListener('click', () => showDetail(name, conversation));
        const remove = h('button', { type: 'button', class: 'danger small', 'aria-label': `delete ${name}` }, 'delete');
        remove.addEventListener(
          'click',
          act(async () => {
            await api.post(`/conversations/${conversation.id}/delete`);
            scheduleRefresh();
          }),
        );
        const count = conversation.messages.iterable.length;
        return h(
          'li',
          { dataset: { id: conversation.id } },
          h('span', { class: 'name' }, name),
          h('span', { class: 'muted' }, `${count} message${count === 1 ? '' : 's'} · ${when(conversation.created)}`),
          h('span', { class: 'actions' }, show, remove),
        );
      }),
    );
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
      scheduleRefresh();
    })();
  });

  const assetNames = new Map(SAMPLE_ASSETS.map((a) => [a.id, a.name]));
  const assets = await api.get<{ iterable: Array<{ id: string }> }>('/assets/identifiers');
  $('#asset-select').replaceChildren(
    ...assets.value.iterable.map(({ id }) => h('option', { value: id }, assetNames.get(id) ?? id)),
  );
  $('#asset-form').addEventListener('submit', (event) => {
    event.preventDefault();
    act(async () => {
      const id = $<HTMLSelectElement>('#asset-select').value;
      const { value } = await api.post<{ conversation: { id: string; reference: Conversation } }>(`/conversations/create/from_asset/${id}`);
      showDetail(value.conversation.reference.name ?? 'From asset', value.conversation.reference);
      scheduleRefresh();
    })();
  });

  transferables.addEventListener(
    'change',
    act(async () => {
      await refreshConversations();
      const other = transferables.checked ? 'false' : 'true';
      const { call } = await api.get(`/conversations?transferables=${other}`);
      sizes[other] = call.bytes;
      showSizes();
    }),
  );

  // The live list: the stream's first message and every change refresh it.
  function connect() {
    const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/conversations/stream/identifiers`);
    liveSocket = socket;
    socket.addEventListener('open', () => {
      if (watch.state !== 'lost') showStreamState('open', 'live');
    });
    socket.addEventListener('message', scheduleRefresh);
    socket.addEventListener('close', () => {
      showStreamState('closed', 'stream closed, reconnecting…');
      setTimeout(connect, 1000);
    });
  }
  connect();
  await refreshConversations();

  // Applications -----------------------------------------------------------
  const fill = (select: string, values: readonly string[], selected: string) =>
    $(select).replaceChildren(...values.map((v) => h('option', { value: v, ...(v === selected ? { selected: '' } : {}) }, v)));
  fill('#register-name', ApplicationNameEnum, 'VS_CODE');
  fill('#register-platform', PlatformEnum, 'LINUX');
  let applications: Application[] = [];

  async function refreshApplications() {
    const { value } = await api.get<{ iterable: Application[] }>('/applications');
    applications = value.iterable;
    $('#application-count').textContent = String(applications.length);
    $('#application-list').replaceChildren(
      ...applications.map((app) => {
        const e = app.engagement;
        return h(
          'li',
          { dataset: { id: app.id } },
          h('span', { class: 'name' }, `${app.name} ${app.version}`),
          h('span', { class: 'muted' }, `${app.platform} · ${app.id.slice(0, 8)}`),
          e
            ? h(
                'span',
                { class: 'engagement' },
                `${e.interactions} interactions · ${e.keyboard} keyboard · ${e.installations} installs · ${e.updates} updates · last ${when(e.lastActivity)}`,
              )
            : null,
        );
      }),
    );
    const target = $<HTMLSelectElement>('#event-application');
    const chosen = target.value;
    target.replaceChildren(
      h('option', { value: '' }, 'no application'),
      ...applications.map((app) =>
        h('option', { value: app.id, ...(app.id === chosen ? { selected: '' } : {}) }, `${app.name} ${app.version}`),
      ),
    );
  }

  $('#register-form').addEventListener('submit', (event) => {
    event.preventDefault();
    act(async () => {
      const { value } = await api.post<Application>('/applications/register', {
        id: randomUUID(),
        name: $<HTMLSelectElement>('#register-name').value,
        version: $<HTMLInputElement>('#register-version').value,
        platform: $<HTMLSelectElement>('#register-platform').value,
        onboarded: true,
        privacy: 'OPEN',
      });
      await refreshApplications();
      $<HTMLSelectElement>('#event-application').value = value.id;
    })();
  });
  $('#register-browser').addEventListener(
    'click',
    act(async () => {
      const { value } = await api.post<Application>('/applications/register');
      await refreshApplications();
      $<HTMLSelectElement>('#event-application').value = value.id;
    }),
  );

  const bump = (version: string) => version.replace(/(\d+)(?!.*\d)/, (n) => String(Number(n) + 1));
  for (const button of document.querySelectorAll<HTMLButtonElement>('[data-event]')) {
    button.addEventListener(
      'click',
      act(async () => {
        const id = $<HTMLSelectElement>('#event-application').value;
        const app = applications.find((a) => a.id === id);
        const headers: Record<string, string> = id ? { 'X-Application-ID': id } : {};
        const { engagement: _engagement, ...plain } = app ?? ({} as Application);
        switch (button.dataset.event) {
          case 'interaction':
            await api.post('/applications/usage/engagement/interaction', { description: 'Clicked in the demo', element: 'demo-button' }, headers);
            break;
          case 'keyboard':
            await api.post('/applications/usage/engagement/keyboard', { description: 'Copy', shortcut: [17, 67] }, headers);
            break;
          case 'installation':
            await api.post(
              '/applications/usage/installation',
              { application: app ? plain : { id: randomUUID(), name: 'OBSIDIAN', version: '1.0.0', platform: 'LINUX', onboarded: false, privacy: 'OPEN' } },
              headers,
            );
            break;
          case 'update':
            if (!app) throw new Error('Choose an application to update.');
            await api.post('/applications/usage/updated', { previous: plain, current: { ...plain, version: bump(app.version) } }, headers);
            break;
        }
        await Promise.all([refreshApplications(), refreshSessions()]);
      }),
    );
  }

  // Sessions ---------------------------------------------------------------
  const sessionIds = (): string[] => JSON.parse(localStorage.getItem(SESSIONS_KEY) ?? '[]');
  const saveSessionIds = (ids: string[]) => localStorage.setItem(SESSIONS_KEY, JSON.stringify(ids.slice(-10)));

  async function refreshSessions() {
    const sessions: Session[] = [];
    for (const id of sessionIds()) {
      try {
        sessions.push((await api.get<Session>(`/applications/sessions/${id}`)).value);
      } catch {
        saveSessionIds(sessionIds().filter((s) => s !== id));
      }
    }
    $('#session-list').replaceChildren(
      ...sessions.reverse().map((session) => {
        const close = h('button', { type: 'button', class: 'small' }, 'close');
        close.addEventListener(
          'click',
          act(async () => {
            await api.post('/applications/session/close', JSON.stringify(session.id));
            await refreshSessions();
          }),
        );
        const inspect = h('button', { type: 'button', class: 'link' }, 'inspect');
        const detail = h('pre', { class: 'detail' });
        detail.hidden = true;
        inspect.addEventListener(
          'click',
          act(async () => {
            detail.textContent = JSON.stringify((await api.get(`/applications/sessions/${session.id}`)).value, null, 2);
            detail.hidden = !detail.hidden;
          }),
        );
        const e = session.engagement;
        return h(
          'li',
          { dataset: { id: session.id, state: session.closed ? 'closed' : 'open' } },
          h('span', { class: 'name' }, `${session.id.slice(0, 8)} ${session.closed ? 'closed' : 'open'}`),
          h('span', { class: 'muted' }, `opened ${when(session.opened)} · closed ${when(session.closed)} · ${e.interactions + e.keyboard} events`),
          h('span', { class: 'actions' }, inspect, session.closed ? null : close),
          detail,
        );
      }),
    );
  }
  $('#open-session').addEventListener(
    'click',
    act(async () => {
      const { value } = await api.post<Session>('/applications/session/open');
      saveSessionIds([...sessionIds(), value.id]);
      await refreshSessions();
    }),
  );

  // External applications --------------------------------------------------
  async function refreshExternal() {
    const render = (selector: string, items: Array<{ name: string; version?: string }>) =>
      $(selector).replaceChildren(...items.map((a) => h('li', {}, a.version ? `${a.name} ${a.version}` : a.name)));
    render('#detected-list', (await api.get<{ iterable: Array<{ name: string; version?: string }> }>('/applications/external')).value.iterable);
    render('#related-list', (await api.get<{ iterable: Array<{ name: string; version?: string }> }>('/applications/external/related')).value.iterable);
  }

  $('#clear-log').addEventListener('click', () => $('#request-log').replaceChildren());
  await Promise.all([refreshApplications(), refreshSessions(), refreshExternal()]);
}

main().catch((error: Error) => {
  setStatus('error', `The service could not start: ${error.message}`);
  showError(error);
});
