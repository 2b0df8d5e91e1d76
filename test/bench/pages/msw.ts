/** The peer: MSW with handlers returning the same bodies. */
import { http, HttpResponse } from 'msw';
import { setupWorker } from 'msw/browser';
import { bodies, ready } from './bodies.js';

const handlers = Object.entries(bodies()).map(([url, body]) =>
  http.get(url, () => new HttpResponse(body, { headers: { 'Content-Type': 'application/json; charset=utf-8' } })),
);
await setupWorker(...handlers).start({ quiet: true, onUnhandledFrame: 'bypass' });
ready();
