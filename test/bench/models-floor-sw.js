// The floor of the models benchmark: a bare service worker answering constant bodies, as floor-sw.js
// does; the bodies (a GET /models body is too long for the script URL's query) come from the page in
// a message, and are kept in memory only.
let bodies = {};
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('message', (event) => {
  bodies = event.data.bodies;
  event.ports[0].postMessage('kept');
});
self.addEventListener('fetch', (event) => {
  const body = bodies[event.request.url];
  if (body !== undefined) {
    event.respondWith(new Response(body, { headers: { 'Content-Type': 'application/json; charset=utf-8' } }));
  }
});
