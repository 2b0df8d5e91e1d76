/**
 * The usage events (engagement interaction and keyboard, installation,
 * update), sent for the chosen application with the X-Application-ID header,
 * or for none; the applications' and sessions' figures are read again after.
 */
import type { Api } from './api.js';
import type { ApplicationsPane } from './applications.js';
import { $ } from './dom.js';
import type { Errors } from './errors.js';
import type { SessionsPane } from './sessions.js';
import type { Application } from './types.js';
import { randomUUID } from './uuid.js';

/** The version with its last number one higher: 1.5.0 → 1.5.1. */
const bump = (version: string) => version.replace(/(\d+)(?!.*\d)/, (n) => String(Number(n) + 1));

export function mountUsageEvents(api: Api, applications: ApplicationsPane, sessions: SessionsPane, { act }: Errors): void {
  for (const button of document.querySelectorAll<HTMLButtonElement>('[data-event]')) {
    button.addEventListener(
      'click',
      act(async () => {
        const id = $<HTMLSelectElement>('#event-application').value;
        const app = applications.list.find((a) => a.id === id);
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
              await api.post(
                '/applications/usage/engagement/interaction',
                { description: 'Clicked in the demo', element: 'demo-button' },
                headers,
              );
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
            const installed = app
              ? plain
              : { id: randomUUID(), name: 'OBSIDIAN', version: '1.0.0', platform: 'LINUX', onboarded: false, privacy: 'OPEN' };
            await api.post('/applications/usage/installation', { application: installed }, headers);
            done = app
              ? `Installation recorded for ${label}.`
              : `No application chosen: installed a new one, ${installed.name} ${installed.version}.`;
            break;
          }
          default:
            if (!app) throw new Error('Choose an application to update.');
            await api.post('/applications/usage/updated', { previous: plain, current: { ...plain, version: bump(app.version) } }, headers);
            done = `Update recorded: ${label} → ${bump(app.version)}.`;
        }
        await Promise.all([applications.refresh(), sessions.refresh()]);
        result.textContent = done;
      }),
    );
  }
}
