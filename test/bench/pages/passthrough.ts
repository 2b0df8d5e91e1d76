/** The mirror benchmark's floor: a bare service worker passing requests under the base to the upstream named in `?upstream=`. */
import { controlled, ready } from './bodies.js';

const url = new URL('/passthrough-sw.js', location.href);
url.searchParams.set('upstream', new URL(location.href).searchParams.get('upstream') ?? '');
await navigator.serviceWorker.register(url.href);
await controlled();
ready();
