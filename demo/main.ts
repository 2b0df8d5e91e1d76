/**
 * The demo: an API explorer for the service, with no backend running.
 * Everything shown comes from the worker through plain fetch and WebSocket.
 */
// The SDK's enumerations, each from its own module: the SDK's index is CommonJS and would bring the whole client.
import { ApplicationNameEnum } from '@pieces.app/pieces-os-client/dist/models/ApplicationNameEnum.js';
import { PlatformEnum } from '@pieces.app/pieces-os-client/dist/models/PlatformEnum.js';
import { DEFAULT_BASES, startPiecesService, watchService } from 'pieces-os-worker';
import { ApiError, createApi, type Call } from './api.js';
import { startChat } from './chat.js';
import { restrictConnections } from './csp.js';
import { $, formatBytes, h, plural } from './dom.js';
import { randomUUID } from './uuid.js';

interface MessageValue {
  id: string;
  role: string;
  fragment?: { string?: { raw?: string } };
  [key: string]: unknown;
}
interface Message {
  id: string;
  reference?: MessageValue;
}
interface Conversation {
  id: string;
  name?: string;
  created: { value: string };
  updated: { value: string };
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

const errorHome = errorBox.parentElement!;
let errorTimer: ReturnType<typeof setTimeout> | undefined;
const hideError = () => {
  clearTimeout(errorTimer);
  errorBox.hidden = true;
};
$('#error-close').addEventListener('click', hideError);

/**
 * Shows an error just below the control that failed (its form, row or list),
 * in the flow of the page so that it covers nothing, or in the header when no
 * control caused it. It has a close button and hides itself after 15 s.
 */
function showError(error: unknown, control?: EventTarget | null) {
  $('#error-text').textContent = error instanceof ApiError ? `${error.status}: ${error.message}` : String((error as Error)?.message ?? error);
  const anchor = control instanceof Element ? control.closest('form, .row, ul, ol') : null;
  if (anchor) anchor.after(errorBox);
  else errorHome.append(errorBox);
  errorBox.hidden = false;
  clearTimeout(errorTimer);
  errorTimer = setTimeout(hideError, 15_000);
}

/** Runs an action from a control, showing the service's message next to it on failure. */
const act =
  (action: () => Promise<unknown>) =>
  (event?: Event): void => {
    // Read now: the event's currentTarget is null once its dispatch is over, before the action settles.
    const control = event?.currentTarget;
    void action().catch((error) => showError(error, control));
  };

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
  // The copilot pane. A stored answer changes its conversation: the stream's message for
  // that change refreshes the list and the open conversation, so nothing more to do here.
  const chat = startChat(base, showError, () => {});
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
    // A new socket: closing the old one reads the list again, and the new one's first message is the current snapshot.
    liveSocket?.close();
    void refreshApplications();
    if (shown) {
      stale = true;
      void rereadDetail().catch(showError);
    }
  });
  watch.addEventListener('versionchange', () => setStatus('ready', readyText(watch.workerVersion)));

  // Header: what a client's discovery sees (WellKnownApi health and version).
  async function showHealth() {
    const pill = $('#health');
    try {
      const [health, version] = await Promise.all([api.get('/.well-known/health'), api.get('/.well-known/version')]);
      pill.dataset.state = health.call.body === 'ok' ? 'ready' : 'error';
      pill.textContent = `Pieces OS ${version.call.body} · health ${health.call.body}`;
    } catch (error) {
      pill.dataset.state = 'error';
      pill.textContent = 'Health: no answer';
      throw error;
    }
  }

  // Conversations ----------------------------------------------------------
  const transferables = $<HTMLInputElement>('#transferables');
  /** The size of each variant and the store state it was measured on (ids, updates, messages). */
  const sizes: Partial<Record<'true' | 'false', { bytes: number; state: string }>> = {};
  const stateOf = (conversations: Conversation[]) =>
    JSON.stringify(conversations.map((c) => [c.id, c.updated?.value, c.messages.iterable.map((m) => m.id)]));
  let refreshTimer: ReturnType<typeof setTimeout> | undefined;

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

  async function refreshConversations() {
    renderConversations(await measure(transferables.checked ? 'true' : 'false'));
    showSizes();
  }

  // The detail pane: one conversation read with GET /conversation/{id}, its
  // messages (add, edit, delete) and its name. -------------------------------
  /** The conversation in the detail pane, if any. */
  let shown: string | undefined;
  /** The message being edited: the pane is not redrawn under the editor. */
  let editing: string | undefined;
  let stale = false;

  /** Marks the list item of the shown conversation. */
  function markShown() {
    for (const item of $('#conversation-list').children) item.toggleAttribute('aria-current', (item as HTMLElement).dataset.id === shown);
  }

  function hideDetail() {
    shown = undefined;
    editing = undefined;
    $('#conversation-detail').hidden = true;
    markShown();
  }

  /** Reads the conversation and shows it. */
  async function openConversation(id: string) {
    shown = id;
    editing = undefined;
    const { value } = await api.get<Conversation>(`/conversation/${id}`);
    if (shown === id) renderDetail(value);
  }

  /** Reads the shown conversation again after a change (unless a message is being edited). */
  async function rereadDetail() {
    if (!shown) return;
    if (editing) {
      stale = true;
      return;
    }
    stale = false;
    await openConversation(shown).catch((error) => {
      if (error instanceof ApiError && error.status === 404) hideDetail();
      else throw error;
    });
  }

  /** The conversation the copilot pane is on. */
  let chatOn: string | undefined;

  /**
   * Shows a conversation. The name field keeps what is being typed into it,
   * unless `renamed`: the name is the one the user just asked for (a click on a
   * button does not always take the focus from the field: Safari, Enter).
   */
  function renderDetail(conversation: Conversation, renamed = false) {
    shown = conversation.id;
    if (chatOn !== conversation.id) {
      chatOn = conversation.id;
      void chat.then((c) => c.open(conversation.id, conversation.name ?? 'Untitled')).catch(showError);
    }
    const rename = $<HTMLInputElement>('#rename-name');
    if (renamed || document.activeElement !== rename) rename.value = conversation.name ?? '';
    const count = conversation.messages.iterable.length;
    $('#detail-meta').textContent = `${plural(count, 'message')} · created ${when(conversation.created)} · updated ${when(conversation.updated)}`;
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
    const item = h('li', { dataset: { id, role: reference.role } }, h('span', { class: 'role' }, `[${reference.role}] `), text, h('span', { class: 'actions' }, edit, remove));
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
        if (stale) void rereadDetail().catch(showError);
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
      renderDetail((await api.post<Conversation>('/conversation/update', name ? { ...rest, name } : rest)).value, true);
    })(event);
  });
  $('#auto-name').addEventListener(
    'click',
    act(async () => {
      renderDetail((await api.post<Conversation>(`/conversation/${shown}/rename`)).value, true);
    }),
  );

  function renderConversations(conversations: Conversation[]) {
    if (shown && !conversations.some((c) => c.id === shown)) hideDetail();
    $('#conversation-count').textContent = String(conversations.length);
    const list = $('#conversation-list');
    list.replaceChildren(
      ...conversations.map((conversation) => {
        const name = conversation.name ?? 'Untitled';
        const show = h('button', { type: 'button', class: 'link' }, 'show');
        show.addEventListener('click', act(() => openConversation(conversation.id)));
        const remove = h('button', { type: 'button', class: 'danger small', 'aria-label': `delete ${name}` }, 'delete');
        remove.addEventListener(
          'click',
          act(async () => {
            await api.post(`/conversations/${conversation.id}/delete`);
            if (shown === conversation.id) hideDetail();
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
    markShown();
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

  // The stored assets' ids, named from the assets snapshot (without their text).
  const [assets, named] = await Promise.all([
    api.get<{ iterable: Array<{ id: string }> }>('/assets/identifiers'),
    api.get<{ iterable: Array<{ id: string; name?: string }> }>('/assets?transferables=false'),
  ]);
  const assetNames = new Map(named.value.iterable.map((a) => [a.id, a.name]));
  $('#asset-select').replaceChildren(
    ...assets.value.iterable.map(({ id }) => h('option', { value: id }, assetNames.get(id) ?? id)),
  );
  $('#asset-form').addEventListener('submit', (event) => {
    event.preventDefault();
    act(async () => {
      const id = $<HTMLSelectElement>('#asset-select').value;
      const { value } = await api.post<{ conversation: { id: string; reference: Conversation } }>(`/conversations/create/from_asset/${id}`);
      renderDetail(value.conversation.reference);
    })(event);
  });

  transferables.addEventListener(
    'change',
    act(async () => {
      await refreshConversations();
      await measure(transferables.checked ? 'false' : 'true');
      showSizes();
    }),
  );

  // The live list: the stream's first message and every change refresh it
  // (writes made here too: their change comes back on the stream).
  let firstList: () => void;
  const listed = new Promise<void>((resolve) => (firstList = resolve));
  function connect() {
    const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/conversations/stream/identifiers`);
    liveSocket = socket;
    socket.addEventListener('open', () => {
      if (watch.state !== 'lost') showStreamState('open', 'live');
    });
    socket.addEventListener('message', (event) => {
      const { iterable } = JSON.parse(event.data as string) as { iterable: Array<{ conversation: { id: string }; deleted?: true }> };
      const mine = iterable.find((item) => item.conversation.id === shown);
      if (mine?.deleted) hideDetail();
      else if (mine) stale = true;
      clearTimeout(refreshTimer);
      refreshTimer = setTimeout(() => {
        void refreshConversations().catch(showError).finally(firstList);
        if (stale) void rereadDetail().catch(showError);
      }, 20);
    });
    socket.addEventListener('close', () => {
      showStreamState('closed', 'stream closed, reconnecting…');
      // Without the stream the list could miss changes: read it once now.
      void refreshConversations().catch(showError).finally(firstList);
      setTimeout(connect, 1000);
    });
  }
  connect();
  await listed;

  // Applications -----------------------------------------------------------
  const fill = (select: string, values: readonly string[], selected: string) =>
    $(select).replaceChildren(...values.map((v) => h('option', { value: v, ...(v === selected ? { selected: '' } : {}) }, v)));
  fill('#register-name', Object.values(ApplicationNameEnum), 'VS_CODE');
  fill('#register-platform', Object.values(PlatformEnum), 'LINUX');
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
                `${plural(e.interactions, 'interaction')} · ${plural(e.keyboard, 'keyboard event')} · ${plural(e.installations, 'install')} · ${plural(e.updates, 'update')} · last ${when(e.lastActivity)}`,
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
    })(event);
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
        const label = app ? `${app.name} ${app.version}` : '';
        const result = $('#event-result');
        result.textContent = '';
        let done: string;
        switch (button.dataset.event) {
          case 'interaction':
          case 'keyboard': {
            const kind = button.dataset.event;
            if (kind === 'interaction') {
              await api.post('/applications/usage/engagement/interaction', { description: 'Clicked in the demo', element: 'demo-button' }, headers);
            } else {
              await api.post('/applications/usage/engagement/keyboard', { description: 'Copy', shortcut: [17, 67] }, headers);
            }
            const name = kind === 'interaction' ? 'Interaction' : 'Keyboard event';
            done = app
              ? `${name} recorded for ${label}.`
              : `${name} recorded for no application: it counts for none. Choose an application to see its figures change.`;
            break;
          }
          case 'installation': {
            const installed = app ? plain : { id: randomUUID(), name: 'OBSIDIAN', version: '1.0.0', platform: 'LINUX', onboarded: false, privacy: 'OPEN' };
            await api.post('/applications/usage/installation', { application: installed }, headers);
            done = app ? `Installation recorded for ${label}.` : `No application chosen: installed a new one, ${installed.name} ${installed.version}.`;
            break;
          }
          default:
            if (!app) throw new Error('Choose an application to update.');
            await api.post('/applications/usage/updated', { previous: plain, current: { ...plain, version: bump(app.version) } }, headers);
            done = `Update recorded: ${label} → ${bump(app.version)}.`;
        }
        await Promise.all([refreshApplications(), refreshSessions()]);
        result.textContent = done;
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
          h('span', { class: 'muted' }, `opened ${when(session.opened)} · closed ${when(session.closed)} · ${plural(e.interactions + e.keyboard, 'event')}`),
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
  await Promise.all([showHealth(), refreshApplications(), refreshSessions(), refreshExternal()]);
  document.body.dataset.loaded = 'true';
}

main().catch((error: Error) => {
  setStatus('error', `The service could not start: ${error.message}`);
  showError(error);
});
