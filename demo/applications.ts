/**
 * The applications pane: the registered applications and their engagement
 * figures, and the forms that register one (chosen from the SDK's
 * enumerations, or this browser as the service describes it).
 */
import type { ServiceWatch } from 'pieces-os-worker';
import type { Api } from './api.js';
import { $, h, plural, when } from './dom.js';
import type { Errors } from './errors.js';
import { randomUUID } from './uuid.js';
import type { Application } from './types.js';

export interface ApplicationsPane {
  /** The applications as last read. */
  readonly list: readonly Application[];
  /** Reads the applications again, and the choice of application events are sent for. */
  refresh(): Promise<void>;
}

export function mountApplications(api: Api, { act }: Errors, watch: ServiceWatch): ApplicationsPane {
  // The name and platform choices (the SDK's enumerations) are in the page as served: see vite.config.ts.
  let applications: Application[] = [];

  async function refresh() {
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
    // The OS's own entry (OS_SERVER, listed first) records no usage events: not offered.
    const os = applications[0]?.name === 'OS_SERVER' ? applications[0].id : undefined;
    target.replaceChildren(
      h('option', { value: '' }, 'no application'),
      ...applications
        .filter((app) => app.id !== os)
        .map((app) => h('option', { value: app.id, ...(app.id === chosen ? { selected: '' } : {}) }, `${app.name} ${app.version}`)),
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
      await refresh();
      $<HTMLSelectElement>('#event-application').value = value.id;
    })(event);
  });
  $('#register-browser').addEventListener(
    'click',
    act(async () => {
      const { value } = await api.post<Application>('/applications/register');
      await refresh();
      $<HTMLSelectElement>('#event-application').value = value.id;
    }),
  );

  // Recovered: the list may be stale.
  watch.addEventListener('statechange', () => {
    if (watch.state !== 'lost') void refresh();
  });

  return {
    get list() {
      return applications;
    },
    refresh,
  };
}
