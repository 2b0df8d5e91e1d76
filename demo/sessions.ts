/**
 * The sessions the demo opened (their ids kept in localStorage, the ten
 * latest): open, inspect, close.
 */
import type { Api } from './api.js';
import { $, h, plural, when } from './dom.js';
import type { Errors } from './errors.js';
import type { Session } from './types.js';

const SESSIONS_KEY = 'pieces-demo-sessions';

export interface SessionsPane {
  /** Reads the sessions again (a session the service no longer knows is forgotten). */
  refresh(): Promise<void>;
}

export function mountSessions(api: Api, { act }: Errors): SessionsPane {
  const sessionIds = (): string[] => JSON.parse(localStorage.getItem(SESSIONS_KEY) ?? '[]');
  const saveSessionIds = (ids: string[]) => localStorage.setItem(SESSIONS_KEY, JSON.stringify(ids.slice(-10)));

  async function refresh() {
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
            await refresh();
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
          h(
            'span',
            { class: 'muted' },
            `opened ${when(session.opened)} · closed ${when(session.closed)} · ${plural(e.interactions + e.keyboard, 'event')}`,
          ),
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
      await refresh();
    }),
  );

  return { refresh };
}
