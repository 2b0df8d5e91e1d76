/** The request log: every call the demo makes, newest first, with its answer. */
import type { CallListener } from './api.js';
import { $, formatBytes, h } from './dom.js';

/** The 200 latest calls are kept. */
const KEPT = 200;

/** Wires the log's clear button; returns the listener that logs a call. */
export function mountRequestLog(): CallListener {
  const log = $('#request-log');
  $('#clear-log').addEventListener('click', () => log.replaceChildren());
  return (call) => {
    const ok = call.status < 400;
    const body = call.body.length > 4000 ? `${call.body.slice(0, 4000)}…` : call.body;
    log.prepend(
      h(
        'li',
        { class: ok ? 'ok' : 'fail', dataset: { operation: call.operation, status: String(call.status) } },
        h(
          'details',
          {},
          h(
            'summary',
            {},
            h('span', { class: 'op' }, call.operation),
            h('span', { class: 'method' }, call.method),
            h('code', { class: 'path' }, call.path),
            h('span', { class: 'status' }, String(call.status)),
            h('span', { class: 'ms' }, `${call.ms.toFixed(1)} ms`),
            h('span', { class: 'size' }, formatBytes(call.bytes)),
          ),
          body ? h('pre', {}, prettify(body)) : h('p', { class: 'muted' }, '(no body)'),
        ),
      ),
    );
    while (log.children.length > KEPT) log.lastElementChild!.remove();
  };
}

function prettify(text: string) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
