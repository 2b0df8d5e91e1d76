import { registerSW } from 'virtual:pwa-register';
import { startPiecesService } from 'pieces-os-worker';

const out = document.getElementById('out');

// The app registers its worker; the page attaches to it instead of registering another.
registerSW({ immediate: true });
const service = await startPiecesService({ register: false });

const created = await fetch('http://localhost:1000/conversations/create', {
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({ type: 'COPILOT', name: `Opened ${new Date().toLocaleTimeString()}` }),
}).then((response) => response.json());

const { iterable } = await fetch('http://localhost:1000/conversations/identifiers').then((response) => response.json());
for (const { id } of iterable) {
  const item = document.createElement('li');
  item.textContent = id;
  document.getElementById('conversations').append(item);
}
out.dataset.mode = service.mode;
out.dataset.script = navigator.serviceWorker.controller?.scriptURL ?? '';
out.dataset.created = created.id;
out.textContent = `Ready (${service.mode} mode): ${iterable.length} conversations`;
