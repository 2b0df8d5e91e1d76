// The floor of the mirror's pass-through through a fetch handler: a bare service worker that answers
// every request under http://localhost:1000 by fetching the same path from the upstream named in its
// script URL, and does nothing else.
const upstream = new URL(location.href).searchParams.get('upstream');
const BASE = 'http://localhost:1000';
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (event) => {
  const url = event.request.url;
  if (url.startsWith(`${BASE}/`)) event.respondWith(fetch(upstream + url.slice(BASE.length), { cache: 'no-store' }));
});
