/**
 * The long-term memory pane: the workstream events and summaries on one timeline (newest first),
 * kept live by the summaries' identifier stream; an event ingested as the pattern engine takes one
 * (`/workstream_pattern_engine/ingestions/create`); a range picked (from, to, or a span back from
 * now) that marks what the timeline holds inside it; that range summarized
 * (`/workstream_summaries/create/summary`); and a question asked over it as the Pieces CLI and the
 * C# SDK ask: a range made (`/ranges/create`), then `/qgpt/question` with the workstream dialog
 * pipeline and the range as its temporal grounding. Every request goes to the operation's SDK path.
 */
import type { ServiceWatch } from 'pieces-os-worker';
import type { Api } from './api.js';
import { $, h } from './dom.js';
import type { Errors } from './errors.js';

type Json = Record<string, unknown>;
type Stamp = { value: string };
type Annotation = { id: string; type?: string };
type Summary = Json & { id: string; name?: string; created: Stamp; annotations?: { iterable?: Annotation[] } };
type Event = Json & {
  id: string;
  created: Stamp;
  application?: { name?: string };
  context?: { native_ocr?: { windowTitle?: string; appTitle?: string; ocrText?: string } };
  readable?: string;
};
type Entry = { kind: 'summary' | 'event'; id: string; at: string; label: string; detail: string };

export interface LtmPane {
  /** Reads the timeline and opens the summaries' stream; resolves once the timeline was first read. */
  listen(): Promise<void>;
}

const MINUTE = 60_000;

/** A `datetime-local` input's value for a time (local, to the minute), and back. */
const toInput = (time: number) => {
  const date = new Date(time - new Date(time).getTimezoneOffset() * MINUTE);
  return date.toISOString().slice(0, 16);
};
const fromInput = (value: string) => (value ? new Date(value).getTime() : undefined);

const eventEntry = (event: Event): Entry => {
  const ocr = event.context?.native_ocr;
  return {
    kind: 'event',
    id: event.id,
    at: event.created.value,
    label: ocr?.windowTitle || ocr?.appTitle || event.application?.name || 'workstream event',
    detail: [event.application?.name, ocr?.ocrText ?? event.readable].filter(Boolean).join(' · '),
  };
};

const summaryEntry = (summary: Summary): Entry => ({
  kind: 'summary',
  id: summary.id,
  at: summary.created.value,
  label: summary.name || 'workstream summary',
  detail: '',
});

export function mountLtm(api: Api, base: string, { act, show }: Errors, watch: ServiceWatch): LtmPane {
  const timeline = $('#ltm-timeline');
  const from = $<HTMLInputElement>('#ltm-from');
  const to = $<HTMLInputElement>('#ltm-to');
  const streamState = $('#ltm-stream-state');
  const answer = $('#ltm-answer');
  let entries: Entry[] = [];
  let socket: WebSocket | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;

  /** The range picked, in ms (an open end: none). */
  const range = () => ({ from: fromInput(from.value), to: fromInput(to.value) });
  const inside = (at: string) => {
    const time = new Date(at).getTime();
    const { from: start, to: end } = range();
    return (start === undefined || time >= start) && (end === undefined || time <= end);
  };
  /** The range as the SDK's GroupedTimestamps (an open end left out). */
  const stamps = () => {
    const { from: start, to: end } = range();
    return {
      ...(start !== undefined ? { from: { value: new Date(start).toISOString() } } : {}),
      ...(end !== undefined ? { to: { value: new Date(end).toISOString() } } : {}),
    };
  };

  function render() {
    const shown = entries.filter((entry) => inside(entry.at)).length;
    $('#ltm-count').textContent = String(entries.length);
    $('#ltm-in-range').textContent = `${shown} of ${entries.length} in the range`;
    timeline.replaceChildren(
      ...entries.map((entry) =>
        h(
          'li',
          { dataset: { id: entry.id, kind: entry.kind, inRange: String(inside(entry.at)) } },
          h('span', { class: 'muted' }, new Date(entry.at).toLocaleString()),
          h('span', { class: `badge ${entry.kind}` }, entry.kind),
          h('span', { class: 'name' }, entry.label),
          ...(entry.detail ? [h('span', { class: 'muted' }, entry.detail)] : []),
        ),
      ),
    );
  }

  /** Reads started: a read answered after a later one started is stale. */
  let reads = 0;
  async function refresh() {
    const mine = ++reads;
    const [events, summaries] = await Promise.all([
      api.get<{ iterable: Event[] }>('/workstream_events?transferables=false'),
      api.get<{ iterable: Summary[] }>('/workstream_summaries?transferables=false'),
    ]);
    if (mine !== reads) return;
    entries = [...events.value.iterable.map(eventEntry), ...summaries.value.iterable.map(summaryEntry)].sort((a, b) =>
      a.at < b.at ? 1 : a.at > b.at ? -1 : a.id < b.id ? -1 : 1,
    );
    render();
  }

  function showStreamState(state: 'open' | 'closed' | 'stale', text: string) {
    streamState.dataset.state = state;
    streamState.textContent = text;
  }

  /** The summaries' identifier stream: each frame reads the timeline again (events have no stream in the SDK). */
  function connect() {
    socket?.close();
    const next = new WebSocket(`${base.replace(/^http/, 'ws')}/workstream_summaries/stream/identifiers`);
    socket = next;
    next.addEventListener('open', () => {
      if (watch.state !== 'lost') showStreamState('open', 'live');
    });
    next.addEventListener('message', () => {
      clearTimeout(timer);
      timer = setTimeout(() => void refresh().catch(show), 20);
    });
    next.addEventListener('close', () => {
      if (socket !== next) return;
      showStreamState('closed', 'stream closed, reconnecting…');
      setTimeout(() => socket === next && connect(), 1000);
    });
  }

  watch.addEventListener('statechange', () => {
    if (watch.state === 'lost') showStreamState('stale', 'not live: the worker is gone');
    else if (socket) connect();
  });

  /**
   * The application an ingested event names: the first registered, else the browser registered now;
   * as the SDK's Application model has it (without the engagement figures this service adds).
   */
  async function application(): Promise<Json> {
    const { value } = await api.get<{ iterable: Json[] }>('/applications');
    const { engagement: _figures, ...app } = value.iterable[0] ?? (await api.post<Json>('/applications/register')).value;
    return app;
  }

  async function ingest() {
    const windowTitle = $<HTMLInputElement>('#ltm-window').value.trim();
    const text = $<HTMLTextAreaElement>('#ltm-text').value.trim();
    if (!windowTitle && !text) throw new Error('Give the window title or the text the event shows.');
    await api.post('/workstream_pattern_engine/ingestions/create', {
      event: {
        application: await application(),
        trigger: { check_in: true },
        context: { native_ocr: { ocrText: text, ocrTextHash: '', appTitle: windowTitle, windowTitle, isMerged: false, isCached: false } },
      },
    });
    $<HTMLTextAreaElement>('#ltm-text').value = '';
    await refresh();
  }

  /** The last `minutes` (from then on, no end: what comes next is in it too), or all time. */
  function pickSpan(minutes: number | undefined) {
    from.value = minutes === undefined ? '' : toInput(Date.now() - minutes * MINUTE);
    to.value = '';
    render();
  }

  async function summarize() {
    const { value } = await api.post<Summary>('/workstream_summaries/create/summary', { anonymous_ranges: [stamps()] });
    answer.textContent = `Summary made: ${value.name ?? value.id}`;
    await refresh();
  }

  async function ask() {
    const query = $<HTMLInputElement>('#ltm-question').value.trim();
    if (!query) throw new Error('Ask a question.');
    const { value: made } = await api.post<{ id: string }>('/ranges/create', { ...stamps(), between: true });
    const { value } = await api.post<{ answers: { iterable: Array<{ text: string }> } }>('/qgpt/question', {
      query,
      relevant: { iterable: [] },
      pipeline: { conversation: { contextualizedCodeWorkstreamDialog: {} } },
      temporal: { workstreams: { iterable: [{ id: made.id }] } },
    });
    answer.textContent = value.answers.iterable[0]?.text ?? 'No answer.';
  }

  $('#ltm-ingest').addEventListener('submit', (event) => {
    event.preventDefault();
    act(ingest)(event);
  });
  $('#ltm-ask').addEventListener('submit', (event) => {
    event.preventDefault();
    act(ask)(event);
  });
  $('#ltm-summarize').addEventListener('click', act(summarize));
  for (const button of document.querySelectorAll<HTMLButtonElement>('#ltm-spans button')) {
    button.addEventListener('click', () => pickSpan(button.dataset.minutes ? Number(button.dataset.minutes) : undefined));
  }
  from.addEventListener('change', render);
  to.addEventListener('change', render);

  return {
    async listen() {
      pickSpan(15);
      connect();
      await refresh();
    },
  };
}
