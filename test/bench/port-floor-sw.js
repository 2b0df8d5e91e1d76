// The floor under creates one at a time (test/bench/growth.bench.ts): a bare service worker that
// takes a MessagePort from its page and, for each message, writes the records it was given raw to
// IndexedDB in one transaction and answers over the port when it committed. Nothing else: no
// routing, no validation, no change log of its own (the page sends the change rows too).
// `/port-floor/__wire/<database>`: the floor under a cold snapshot, as floor-sw.js serves it
// (ONE Blob, store `wire`, key 0, read and answered as it is).
const request = (r) =>
  new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
let db;
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('message', (event) => {
  const port = event.ports[0];
  if (!port) return;
  port.onmessage = async ({ data }) => {
    if (data.open) {
      const open = indexedDB.open(data.open, 1);
      open.onupgradeneeded = () => {
        for (const [name, { keyPath, indexes = [] }] of Object.entries(data.stores)) {
          const store = open.result.createObjectStore(name, { keyPath });
          for (const [index, path, unique] of indexes) store.createIndex(index, path, { unique: !!unique });
        }
      };
      db = await request(open);
      port.postMessage({ opened: true });
      return;
    }
    const tx = db.transaction(Object.keys(data.records), 'readwrite');
    for (const [store, records] of Object.entries(data.records)) for (const record of records) tx.objectStore(store).add(record);
    tx.oncomplete = () => port.postMessage(data.answer);
    tx.onabort = () => port.postMessage({ error: String(tx.error) });
  };
  port.postMessage({ ready: true });
});
self.addEventListener('fetch', (event) => {
  const wire = /^\/port-floor\/__wire\/(.+)$/.exec(new URL(event.request.url).pathname);
  if (wire) event.respondWith(storedWire(decodeURIComponent(wire[1])));
});

async function storedWire(name) {
  const wireDb = await request(indexedDB.open(name, 1));
  const blob = await request(wireDb.transaction('wire').objectStore('wire').get(0));
  wireDb.close();
  return new Response(blob, { headers: { 'Content-Type': 'application/json; charset=utf-8' } });
}
