// The floor: answers the benchmark's URLs with constant bodies, and does nothing else.
// `/__wire/<database>`: the floor under a cold snapshot, the answer's bytes stored as ONE Blob in a
// database of this origin (store `wire`, key 0), read and answered as they are.
const bodies = JSON.parse(new URL(location.href).searchParams.get('bodies') || '{}');
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (event) => {
  const wire = /^\/__wire\/(.+)$/.exec(new URL(event.request.url).pathname);
  if (wire) {
    event.respondWith(storedWire(decodeURIComponent(wire[1])));
    return;
  }
  const body = bodies[event.request.url];
  if (body !== undefined) {
    event.respondWith(new Response(body, { headers: { 'Content-Type': 'application/json; charset=utf-8' } }));
  }
});

async function storedWire(name) {
  const request = (r) =>
    new Promise((resolve, reject) => {
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
  const db = await request(indexedDB.open(name, 1));
  const blob = await request(db.transaction('wire').objectStore('wire').get(0));
  db.close();
  return new Response(blob, { headers: { 'Content-Type': 'application/json; charset=utf-8' } });
}
