// The app's own service worker: Workbox precaching, plus the Pieces OS API.
import { clientsClaim } from 'workbox-core';
import { precacheAndRoute } from 'workbox-precaching';
import { addPiecesRoutes } from 'pieces-os-worker/worker';

self.skipWaiting();
clientsClaim();
precacheAndRoute(self.__WB_MANIFEST);
addPiecesRoutes(); // on Workbox's default router, next to the precache route
