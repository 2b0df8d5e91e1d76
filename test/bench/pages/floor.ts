/** The floor: an empty service worker answering a constant body. */
import { bodies, controlled, ready } from './bodies.js';

const url = new URL('/floor-sw.js', location.href);
url.searchParams.set('bodies', JSON.stringify(bodies()));
await navigator.serviceWorker.register(url.href);
await controlled();
ready();
