/** The models benchmark's floor: a bare service worker told its constant bodies in a message. */
import { bodies, controlled, ready } from './bodies.js';

await navigator.serviceWorker.register('/models-floor-sw.js');
await controlled();
await new Promise((resolve) => {
  const { port1, port2 } = new MessageChannel();
  port1.onmessage = resolve;
  navigator.serviceWorker.controller!.postMessage({ bodies: bodies() }, [port2]);
});
ready();
