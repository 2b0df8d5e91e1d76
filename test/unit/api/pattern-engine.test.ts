/**
 * The workstream pattern engine as clients use it: the vision processor switched on (its status,
 * its socket, /os/permissions follow), events ingested (a workstream event with the source and
 * window it names, and a vision event while the processor is on), a summary made from a range's
 * events (its SUMMARY and DESCRIPTION annotations as the Pieces CLI reads them), regenerated,
 * vision events searched and deleted by scope and by time range, calibrations; bad input is a 400
 * that changes nothing. Every answer is held to its SDK model by the response check.
 */
import {
  WorkstreamSummariesApi,
  WorkstreamSummaryApi,
  WorkstreamEventApi,
  WorkstreamEventsApi,
  WorkstreamPatternEngineSourcesApi,
  WorkstreamPatternEngineSourceWindowsApi,
  AnnotationApi,
  type SeededWorkstreamEvent,
} from '@pieces.app/pieces-os-client';
import { describe, expect, it } from 'vitest';
import { application, BASE, dump, jsonPost, setup } from '../support/harness.js';
import { sockets, until } from '../support/sockets.js';

/** A clock the test moves: each request's time is the one set. */
function manualClock(start: string) {
  let now = new Date(start);
  return { now: () => now, set: (iso: string) => (now = new Date(iso)) };
}

const app = application({ name: 'VS_CODE' });

/** A SeededWorkstreamEvent of a window captured by OCR (what the vision processor records). */
const captured = (window: string, ocrText: string, browserUrl?: string): SeededWorkstreamEvent => ({
  application: app as SeededWorkstreamEvent['application'],
  trigger: { checkIn: true },
  context: {
    nativeOcr: {
      ocrText,
      ocrTextHash: 'h',
      appTitle: 'Code',
      windowTitle: window,
      isMerged: false,
      isCached: false,
      ...(browserUrl ? { browserUrl } : {}),
    },
  },
});

async function engine(clock = manualClock('2026-11-29T05:00:00.000Z')) {
  const t = await setup({ now: clock.now, sampleAssets: false });
  return {
    ...t,
    clock,
    summaries: new WorkstreamSummariesApi(t.configuration),
    summary: new WorkstreamSummaryApi(t.configuration),
    events: new WorkstreamEventsApi(t.configuration),
    event: new WorkstreamEventApi(t.configuration),
    sources: new WorkstreamPatternEngineSourcesApi(t.configuration),
    windows: new WorkstreamPatternEngineSourceWindowsApi(t.configuration),
    annotation: new AnnotationApi(t.configuration),
  };
}

describe('the workstream pattern engine', () => {
  it('activate → status frame → ingest → events listed → summary of a range → regenerate → scoped delete → data clear', async () => {
    const t = await engine();
    const stream = sockets(t).open('ws://localhost:1000/workstream_pattern_engine/processors/vision/status/stream');
    await until(() => stream.frames.length === 1, 'the status on open');
    expect(JSON.parse(stream.frames[0]!)).toEqual({ vision: { degraded: false } });
    expect(await t.os.osPermissions()).toEqual({ processing: { vision: false, accessibility: false } });

    // Activated as the CLI does it: from now on, continuously.
    const on = await t.workstream.workstreamPatternEngineProcessorsVisionActivate({
      workstreamPatternEngineStatus: { vision: { activation: { continuous: true } } },
    });
    expect(on.vision?.activation).toEqual({ continuous: true });
    await until(() => stream.frames.length === 2, 'the status after activate');
    expect(JSON.parse(stream.frames[1]!)).toEqual({ vision: { activation: { continuous: true }, degraded: false } });
    expect(await t.workstream.workstreamPatternEngineProcessorsVisionStatus()).toEqual(on);
    expect(await t.os.osPermissions()).toEqual({ processing: { vision: true, accessibility: true } });

    // Three events: two in one window (one source, one window), one in a browser page.
    await t.workstream.workstreamPatternEngineCreateIngestion({
      seededWorkstreamIngestion: { event: captured('main.ts', 'export const answer = 42') },
    });
    t.clock.set('2026-11-29T05:10:00.000Z');
    await t.workstream.workstreamPatternEngineCreateIngestion({ seededWorkstreamIngestion: { event: captured('main.ts', 'answer * 2') } });
    t.clock.set('2026-11-29T05:40:00.000Z');
    await t.workstream.workstreamPatternEngineCreateIngestion({
      seededWorkstreamIngestion: {
        event: captured('Docs — MDN', 'Array.prototype.flatMap', 'https://developer.mozilla.org/en-US/docs/flatMap'),
      },
    });

    const events = (await t.events.workstreamEventsSnapshot({})).iterable;
    expect(events.map((event) => event.windowTitle)).toEqual(['main.ts', 'main.ts', 'Docs — MDN']);
    expect(events[2]!.browserUrl).toBe('https://developer.mozilla.org/en-US/docs/flatMap');
    const sources = (await t.sources.workstreamPatternEngineSourcesSnapshot({})).iterable;
    expect(sources.map((source) => source.raw)).toEqual([
      { application: 'Code' },
      { application: 'Code', url: 'https://developer.mozilla.org' },
    ]);
    expect(sources[0]!.workstreamEvents?.iterable.map((ref) => ref.id)).toEqual([events[0]!.id, events[1]!.id]);
    expect(events[0]!.sources?.iterable.map((ref) => ref.id)).toEqual([sources[0]!.id]);
    const windows = (await t.windows.workstreamPatternEngineSourceWindowsSnapshot({})).iterable;
    expect(windows.map((window) => [window.name, window.workstreamEvents?.iterable.length])).toEqual([
      ['main.ts', 2],
      ['Docs — MDN', 1],
    ]);
    expect(events[1]!.sourceWindows?.iterable.map((ref) => ref.id)).toEqual([windows[0]!.id]);
    expect((await t.workstream.workstreamPatternEngineProcessorsSources()).iterable).toEqual(sources.map((source) => source.raw));

    const vision = (await t.workstream.workstreamPatternEngineProcessorsVisionEventsSnapshot({})).iterable;
    expect(vision.map((event) => [event.source?.window, event.textual?.ocr?.raw])).toEqual([
      ['main.ts', 'export const answer = 42'],
      ['main.ts', 'answer * 2'],
      ['Docs — MDN', 'Array.prototype.flatMap'],
    ]);
    expect(await t.workstream.workstreamPatternEngineProcessorsVisionEventsSpecificSnapshot({ visionEvent: vision[1]!.id })).toEqual(
      vision[1],
    );
    const metadata = await t.workstream.workstreamPatternEngineProcessorsVisionMetadata();
    expect(metadata.events).toMatchObject({ total: 3, oldest: vision[0], newest: vision[2] });

    // A summary of the first half hour: the two events in main.ts, not the third.
    const made = await t.summaries.workstreamSummariesCreateAutogeneratedWorkstreamSummary({
      autoGeneratedWorkstreamSummaryInput: {
        anonymousRanges: [{ from: { value: new Date('2026-11-29T05:00:00.000Z') }, to: { value: new Date('2026-11-29T05:30:00.000Z') } }],
      },
    });
    expect(made.events?.iterable.map((ref) => ref.id)).toEqual([events[0]!.id, events[1]!.id]);
    expect(made.name).toBe('Code: 2026-11-29 05:00 – 2026-11-29 05:30 UTC');
    // As the CLI reads it: the annotations' ids from `indices`, the SUMMARY one's text.
    const notes = await Promise.all(
      Object.keys(made.annotations?.indices ?? {}).map((id) => t.annotation.annotationSpecificAnnotationSnapshot({ annotation: id })),
    );
    expect(notes.map((note) => note.type)).toEqual(['SUMMARY', 'DESCRIPTION']);
    const text = notes[0]!.text;
    expect(text).toContain('2 events in 1 application (Code), 1 window');
    expect(text).toContain('- 2026-11-29 05:00 Code — main.ts: check in');
    expect(text).toContain('- 2026-11-29 05:10 Code — main.ts: check in');
    expect(text).not.toContain('MDN');
    expect(notes[1]!.text).toBe('2 events in 1 application (Code), 1 window, 2026-11-29 05:00 – 2026-11-29 05:30 UTC.');
    // Both sides list it, and it is read back.
    expect((await t.event.workstreamEventsSpecificWorkstreamEventSnapshot({ workstreamEvent: events[0]!.id })).summaries?.iterable).toEqual(
      [{ id: made.id }],
    );
    expect(await t.summary.workstreamSummariesSpecificWorkstreamSummarySnapshot({ workstreamSummary: made.id })).toEqual(made);

    // Regenerate after one of its events went: the text is written again from what is left, in the same annotations.
    await t.events.workstreamEventsDeleteSpecificWorkstreamEvent({ workstreamEvent: events[1]!.id });
    t.clock.set('2026-11-29T06:00:00.000Z');
    const again = await t.summary.workstreamSummaryRegenerateSpecificSummary({ workstreamSummary: made.id });
    expect(Object.keys(again.annotations?.indices ?? {})).toEqual(Object.keys(made.annotations?.indices ?? {}));
    expect(again.updated.value.toISOString()).toBe('2026-11-29T06:00:00.000Z');
    const rewritten = await t.annotation.annotationSpecificAnnotationSnapshot({ annotation: notes[0]!.id });
    expect(rewritten.text).toContain('1 event in 1 application (Code), 1 window');
    expect(rewritten.text).not.toContain('05:10');

    // Vision events: searched, one deleted by its id, then those a search scope finds.
    const found = await t.workstream.workstreamPatternEngineProcessorsVisionEventsSearch({
      searchInput: { engines: { iterable: [{ query: 'answer' }] } },
    });
    expect(found.iterable.map((item) => item.identifier)).toEqual([vision[0]!.id, vision[1]!.id]);
    await t.workstream.workstreamPatternEngineProcessorsVisionEventDeleteSpecificVisionEvent({ visionEvent: vision[0]!.id });
    const scoped = await t.workstream.workstreamPatternEngineProcessorsVisionEventsScopedDelete({
      workstreamPatternEngineVisionEventDeletions: { searchScope: { engines: { iterable: [{ query: 'answer' }] } } },
    });
    expect(scoped.iterable).toEqual([{ id: vision[1]!.id }]);
    expect((await t.workstream.workstreamPatternEngineProcessorsVisionEventsSnapshot({})).iterable.map((event) => event.id)).toEqual([
      vision[2]!.id,
    ]);

    // Data clear of a range that holds none of them clears none; of the range that holds it, that one.
    const range = (from: string, to: string) => ({ ranges: [{ from: { value: new Date(from) }, to: { value: new Date(to) } }] });
    await t.workstream.workstreamPatternEngineProcessorsVisionDataClear({
      workstreamPatternEngineDataCleanupRequest: range('2026-11-29T05:00:00.000Z', '2026-11-29T05:30:00.000Z'),
    });
    expect((await t.workstream.workstreamPatternEngineProcessorsVisionEventsSnapshot({})).iterable).toHaveLength(1);
    await t.workstream.workstreamPatternEngineProcessorsVisionDataClear({
      workstreamPatternEngineDataCleanupRequest: range('2026-11-29T05:30:00.000Z', '2026-11-29T05:50:00.000Z'),
    });
    expect((await t.workstream.workstreamPatternEngineProcessorsVisionEventsSnapshot({})).iterable).toEqual([]);

    // Deactivated: the socket says so, permissions go, and an ingestion records no vision event (the workstream event still).
    const off = await t.workstream.workstreamPatternEngineProcessorsVisionDeactivate({});
    expect(off.vision?.activation).toBeUndefined();
    await until(() => stream.frames.length === 3, 'the status after deactivate');
    expect(JSON.parse(stream.frames[2]!)).toEqual({
      vision: { deactivation: { from: { value: '2026-11-29T06:00:00.000Z' }, continuous: true }, degraded: false },
    });
    expect(await t.os.osPermissions()).toEqual({ processing: { vision: false, accessibility: false } });
    await t.workstream.workstreamPatternEngineCreateIngestion({ seededWorkstreamIngestion: { event: captured('main.ts', 'later') } });
    expect((await t.workstream.workstreamPatternEngineProcessorsVisionEventsSnapshot({})).iterable).toEqual([]);
    expect((await t.events.workstreamEventsSnapshot({})).iterable).toHaveLength(3);
    expect((await t.os.osMetadata()).totals?.workstreamEvents).toBe(3);
  });

  it('keeps the status, vision events and calibrations across a restart; a pause until a time ends then; a reset turns it off and clears them', async () => {
    const t = await engine();
    await t.workstream.workstreamPatternEngineProcessorsVisionActivate({});
    await t.workstream.workstreamPatternEngineCreateIngestion({ seededWorkstreamIngestion: { event: captured('main.ts', 'kept') } });
    await t.workstream.workstreamPatternEngineProcessorsVisionCalibrationCapture();
    const restarted = await setup({ databaseName: t.databaseName, now: t.clock.now, sampleAssets: false });
    expect(
      (await restarted.workstream.workstreamPatternEngineProcessorsVisionEventsSnapshot({})).iterable.map((e) => e.textual?.ocr?.raw),
    ).toEqual(['kept']);
    expect((await restarted.workstream.workstreamPatternEngineProcessorsVisionCalibrationsSnapshot()).iterable).toHaveLength(1);
    expect((await restarted.workstream.workstreamPatternEngineProcessorsVisionStatus()).vision?.activation).toEqual({
      from: { value: new Date('2026-11-29T05:00:00.000Z') },
      continuous: true,
    });
    await restarted.workstream.workstreamPatternEngineProcessorsVisionDeactivate({
      workstreamPatternEngineStatus: { vision: { deactivation: { to: { value: new Date('2026-11-29T05:30:00.000Z') } } } },
    });
    expect((await restarted.workstream.workstreamPatternEngineProcessorsVisionStatus()).vision?.activation).toBeUndefined();
    t.clock.set('2026-11-29T05:31:00.000Z');
    expect((await restarted.workstream.workstreamPatternEngineProcessorsVisionStatus()).vision?.activation).toEqual({
      from: { value: new Date('2026-11-29T05:30:00.000Z') },
      continuous: true,
    });
    await restarted.service.reset();
    expect(await restarted.workstream.workstreamPatternEngineProcessorsVisionStatus()).toEqual({ vision: { degraded: false } });
    expect((await restarted.workstream.workstreamPatternEngineProcessorsVisionEventsSnapshot({})).iterable).toEqual([]);
    expect((await restarted.workstream.workstreamPatternEngineProcessorsVisionCalibrationsSnapshot()).iterable).toEqual([]);
  });

  it('captures a calibration of the window in front (the last ingested event’s)', async () => {
    const t = await engine();
    const none = await t.fetch(`${BASE}/workstream_pattern_engine/processors/vision/calibration/capture`, { method: 'POST' });
    expect(none.status).toBe(409);
    expect((await t.fetch(`${BASE}/workstream_pattern_engine/processors/vision/calibrations/focused`)).status).toBe(404);
    await t.workstream.workstreamPatternEngineCreateIngestion({ seededWorkstreamIngestion: { event: captured('Pieces Copilot', 'qr') } });
    const calibration = await t.workstream.workstreamPatternEngineProcessorsVisionCalibrationCapture();
    expect(calibration).toEqual({ foreground: 'Pieces Copilot', captured: { value: new Date('2026-11-29T05:00:00.000Z') } });
    expect((await t.workstream.workstreamPatternEngineProcessorsVisionCalibrationsSnapshot()).iterable).toEqual([calibration]);
    expect(await t.workstream.workstreamPatternEngineProcessorsVisionCalibrationsFocused()).toEqual(calibration);
  });

  it('refuses bad input with a 400 naming the field, and changes nothing', async () => {
    const t = await engine();
    await t.workstream.workstreamPatternEngineProcessorsVisionActivate({});
    await t.workstream.workstreamPatternEngineCreateIngestion({ seededWorkstreamIngestion: { event: captured('main.ts', 'x') } });
    const before = await dump(t.databaseName);
    const event = { application: app, trigger: { check_in: true } };
    const cases: Array<[string, RequestInit, number, RegExp]> = [
      ['/workstream_pattern_engine/ingestions/create', { method: 'POST' }, 400, /send a SeededWorkstreamIngestion/],
      ['/workstream_pattern_engine/ingestions/create', jsonPost({}), 400, /seededWorkstreamIngestion\.event is required/],
      [
        '/workstream_pattern_engine/ingestions/create',
        jsonPost({ event, extra: 1 }),
        400,
        /extra is not a field of SeededWorkstreamIngestion/,
      ],
      ['/workstream_pattern_engine/ingestions/create', jsonPost({ event: { ...event, trigger: { wave: true } } }), 400, /trigger/],
      ['/workstream_pattern_engine/ingestions/create', jsonPost({ event: { trigger: {} } }), 400, /application/],
      ['/workstream_pattern_engine/processors/vision/activate', jsonPost({ vision: { degraded: 'no' } }), 400, /vision\.degraded/],
      ['/workstream_pattern_engine/processors/vision/deactivate', jsonPost({ vision: { off: true } }), 400, /off is not a field/],
      ['/workstream_summaries/create/summary', jsonPost({}), 400, /anonymous_ranges is required/],
      [
        '/workstream_summaries/create/summary',
        jsonPost({ anonymous_ranges: [{ from: { value: 'yesterday' } }] }),
        400,
        /anonymous_ranges\[0\]\.from/,
      ],
      ['/workstream_summaries/create/summary', jsonPost({ events: { iterable: [] }, anonymous_ranges: [] }), 400, /not both/],
      [
        '/workstream_summaries/create/summary',
        jsonPost({ events: { iterable: [{ id: '00000000-0000-4000-8000-000000000000' }] } }),
        404,
        /No workstreamEvent with id 00000000/,
      ],
      ['/workstream_summary/00000000-0000-4000-8000-000000000000/regenerate/summary', { method: 'POST' }, 404, /No workstreamSummary/],
      ['/workstream_summary/nope/regenerate/summary', { method: 'POST' }, 400, /must be a UUID/],
      ['/workstream_pattern_engine/processors/vision/data/clear', jsonPost({ ranges: {} }), 400, /ranges must be an array/],
      ['/workstream_pattern_engine/processors/vision/data/events/scoped_delete', jsonPost({}), 400, /identifiers\) or a search_scope/],
      ['/workstream_pattern_engine/processors/vision/data/events/search', jsonPost({}), 400, /query is required/],
      [
        '/workstream_pattern_engine/processors/vision/data/events/00000000-0000-4000-8000-000000000000/delete',
        { method: 'POST' },
        404,
        /No vision event/,
      ],
    ];
    for (const [path, init, status, message] of cases) {
      const response = await t.fetch(`${BASE}${path}`, init);
      expect(response.status, path).toBe(status);
      expect(await response.text(), path).toMatch(message);
    }
    expect(await dump(t.databaseName)).toBe(before);
  });
});
