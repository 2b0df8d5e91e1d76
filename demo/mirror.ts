/**
 * The mirror indicator: with `?mirror=<Pieces OS URL, or auto>`, the demo mirrors a real
 * Pieces OS, and this pill says where it stands: up (requests go to it), down (answered
 * here, writes queued), draining (the queue being replayed), blocked (the browser refused
 * this page the local network: a click asks again), with the number of queued operations.
 */
import { connectMirror, type MirrorStatus, type PiecesService, type ServiceWatch } from 'pieces-os-worker';
import { $ } from './dom.js';
import { plural } from './dom.js';

/** The pill's colour, from the header's: up is ready, draining is starting, down is lost, blocked is an error. */
const TONE: Record<MirrorStatus['state'], string> = { up: 'ready', draining: 'starting', down: 'lost', blocked: 'error' };

const WORDS: Record<MirrorStatus['state'], string> = {
  up: 'Pieces OS up',
  down: 'Pieces OS down: answered here',
  draining: 'Pieces OS back: replaying',
  blocked: 'Pieces OS blocked by the browser: click to allow',
};

export interface MirrorIndicator {
  /** Reads the status now (the announcements follow it from then on). */
  refresh(): Promise<void>;
}

export function mountMirror(service: PiecesService, watch: ServiceWatch): MirrorIndicator {
  const pill = $<HTMLButtonElement>('#mirror');
  const show = (status: MirrorStatus | null) => {
    if (!status) return;
    pill.hidden = false;
    pill.dataset.mirror = status.state;
    pill.dataset.state = TONE[status.state];
    pill.dataset.outbox = String(status.outbox.length);
    const queued = status.outbox.length ? ` · ${plural(status.outbox.length, 'queued write')}` : '';
    const setAside = status.setAside.length ? ` · ${plural(status.setAside.length, 'refused write')}` : '';
    pill.textContent = `${WORDS[status.state]}${queued}${setAside}`;
    pill.title = [status.upstream ?? 'not found yet', status.lastError].filter(Boolean).join(' — ');
  };
  watch.addEventListener('mirrorchange', () => show(watch.mirror));
  // Blocked: the page asks the browser again (a click is what the permission prompt needs).
  pill.addEventListener('click', () => {
    if (pill.dataset.mirror === 'blocked') void connectMirror().then(show);
  });
  return {
    async refresh() {
      show(await service.mirrorStatus());
    },
  };
}
