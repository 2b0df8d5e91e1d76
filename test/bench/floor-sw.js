// The floor: answers the benchmark's URLs with constant bodies, and does nothing else.
const bodies = JSON.parse(new URL(location.href).searchParams.get('bodies') || '{}');
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (event) => {
  const body = bodies[event.request.url];
  if (body !== undefined) {
    event.respondWith(new Response(body, { headers: { 'Content-Type': 'application/json; charset=utf-8' } }));
  }
});
