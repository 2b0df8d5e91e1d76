/** The external applications: those detected on the machine, and those related to Pieces. */
import type { Api } from './api.js';
import { $, h } from './dom.js';

interface ExternalApplication {
  name: string;
  version?: string;
}

export interface ExternalPane {
  /** Reads both lists again. */
  refresh(): Promise<void>;
}

export function mountExternalApplications(api: Api): ExternalPane {
  const render = (selector: string, items: ExternalApplication[]) =>
    $(selector).replaceChildren(...items.map((a) => h('li', {}, a.version ? `${a.name} ${a.version}` : a.name)));
  return {
    async refresh() {
      render('#detected-list', (await api.get<{ iterable: ExternalApplication[] }>('/applications/external')).value.iterable);
      render('#related-list', (await api.get<{ iterable: ExternalApplication[] }>('/applications/external/related')).value.iterable);
    },
  };
}
