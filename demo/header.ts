/**
 * The header: the bases the service answers, the service's status pill (it
 * follows the service: lost and started again, recovered, another worker
 * version) and what a client's discovery sees (WellKnownApi health and version).
 */
import type { PiecesService, ServiceWatch } from 'pieces-os-worker';
import type { Api } from './api.js';
import { $, h } from './dom.js';

export type StatusState = 'starting' | 'ready' | 'lost' | 'error';

/** The status pill, usable before the service starts (and when it cannot). */
export function setStatus(state: StatusState, text: string): void {
  const status = $('#status');
  status.dataset.state = state;
  status.textContent = text;
}

export interface Header {
  /** Reads health and version and shows them in their pill. */
  showHealth(): Promise<void>;
}

export function mountHeader(api: Api, service: PiecesService, watch: ServiceWatch): Header {
  const status = $('#status');
  // Each base in one piece: a port range such as 39300-39333 never breaks across lines.
  $('#bases').replaceChildren(...service.bases.flatMap((base, i) => [...(i ? [', '] : []), h('code', {}, base)]));
  status.dataset.mode = service.mode;
  const readyText = (worker: string) =>
    service.mode === 'page'
      ? `Offline-ready (in the page: ${service.reason})`
      : worker !== service.version.page
        ? `Offline-ready (worker ${worker} ≠ page ${service.version.page})`
        : 'Offline-ready';
  setStatus('ready', readyText(service.version.worker));

  watch.addEventListener('statechange', () => {
    if (watch.state === 'lost') {
      setStatus('lost', `Worker lost: ${watch.reason}`);
      return;
    }
    setStatus('ready', `${readyText(watch.workerVersion)} · recovered`);
    status.title = watch.reason;
  });
  watch.addEventListener('versionchange', () => setStatus('ready', readyText(watch.workerVersion)));

  return {
    async showHealth() {
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
    },
  };
}
