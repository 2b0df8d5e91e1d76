/**
 * Long-term memory as its clients use it, through the SDK (every body and frame held to its SDK
 * model by the response and frame checks):
 *   (a) the Pieces CLI's LTM chat: POST /ranges/create (the last 15 minutes, open-ended), the
 *       conversation grounded on it (conversationAssociateGroundingTemporalRangeWorkstream), then
 *       /qgpt/stream with `pipeline.conversation.contextualized_code_workstream_dialog` and
 *       `relevance.temporal`: the answer is made from the events inside the range, cited by id;
 *   (b) the CLI TUI's summary view: the summaries' identifier stream, GET /workstream_summary/{id},
 *       its SUMMARY and DESCRIPTION annotations, update and delete;
 *   (c) the C# SDK's LongTermMemory chat: a range of the last 15 minutes grounding the conversation
 *       (from the range's side), asked with /qgpt/question and over /qgpt/stream;
 * and summaries written by a configured model (its prompt made from the events), deterministic without.
 */
import {
  AnnotationApi,
  QGPTApi,
  QGPTStreamInputToJSON,
  WorkstreamSummariesApi,
  WorkstreamSummaryApi,
  type QGPTStreamInput,
  type SeededWorkstreamEvent,
} from '@pieces.app/pieces-os-client';
import { describe, expect, it } from 'vitest';
import type { AnswerRequest, ModelAdapter } from '../../../src/core/copilot/model.js';
import { ModelError } from '../../../src/core/copilot/model.js';
import { application, dump, setup } from '../support/harness.js';
import { sockets, until } from '../support/sockets.js';

const captured = (window: string, ocrText: string): SeededWorkstreamEvent => ({
  application: application({ name: 'VS_CODE' }) as SeededWorkstreamEvent['application'],
  trigger: { checkIn: true },
  context: { nativeOcr: { ocrText, ocrTextHash: 'h', appTitle: 'Code', windowTitle: window, isMerged: false, isCached: false } },
});

const WORKSTREAM = { conversation: { contextualizedCodeWorkstreamDialog: {} } };

interface Frame {
  request?: string;
  status: string;
  question?: { answers: { iterable: Array<{ text: string }> } };
  relevance?: { relevant: { iterable: Array<{ id?: string }> } };
  errorMessage?: string;
}

/**
 * A store with three events: one about the deploy pipeline 45 minutes before "now" (06:00), one
 * about it 10 minutes before, one about something else 5 minutes before; the clock then at 06:00.
 */
async function memory(options: Parameters<typeof setup>[0] = {}) {
  let now = new Date('2026-11-29T05:15:00.000Z');
  const t = await setup({ now: () => now, sampleAssets: false, ...options });
  const at = (iso: string) => (now = new Date(iso));
  const ingest = async (iso: string, event: SeededWorkstreamEvent) => {
    at(iso);
    await t.workstream.workstreamPatternEngineCreateIngestion({ seededWorkstreamIngestion: { event } });
    return (await t.storage.listMaterials('workstreamEvent')).at(-1)!.id;
  };
  const outside = await ingest('2026-11-29T05:15:00.000Z', captured('deploy.yml', 'the deploy pipeline broke on staging'));
  const inside = await ingest('2026-11-29T05:50:00.000Z', captured('ci.yml', 'deploy pipeline fixed by pinning node 22'));
  const other = await ingest('2026-11-29T05:55:00.000Z', captured('lunch.md', 'soup of the day'));
  at('2026-11-29T06:00:00.000Z');
  const stream = sockets(t);
  const chat = async () => {
    const socket = stream.open('ws://localhost:1000/qgpt/stream');
    await until(() => socket.events.includes('open'), 'the copilot socket open');
    return {
      ask: async (input: QGPTStreamInput) => {
        const from = socket.frames.length;
        socket.socket.send(JSON.stringify(QGPTStreamInputToJSON(input)));
        const mine = () => socket.frames.slice(from).map((frame) => JSON.parse(frame) as Frame);
        await until(() => mine().some((frame) => frame.status !== 'IN-PROGRESS'), 'the answer');
        const frames = mine();
        return {
          frames,
          status: frames.at(-1)!.status,
          text: frames.map((frame) => frame.question?.answers.iterable[0]?.text ?? '').join(''),
          cited: frames.flatMap((frame) => frame.relevance?.relevant.iterable.map((seed) => seed.id) ?? []),
        };
      },
    };
  };
  return {
    ...t,
    at,
    outside,
    inside,
    other,
    chat,
    stream,
    qgpt: new QGPTApi(t.configuration),
    summaries: new WorkstreamSummariesApi(t.configuration),
    summary: new WorkstreamSummaryApi(t.configuration),
    annotation: new AnnotationApi(t.configuration),
  };
}

describe('long-term memory chat', () => {
  it("(a) the CLI's LTM chat: range of the last 15 minutes, grounded conversation, /qgpt/stream with the workstream pipeline", async () => {
    const m = await memory();
    const chat = (
      await m.conversations.conversationsCreateSpecificConversation({ seededConversation: { type: 'COPILOT', name: 'New Conversation' } })
    ).id;
    // BasicRange.create(): from 15 minutes ago, no end.
    const range = await m.ranges.rangesCreateNewRange({ seededRange: { from: { value: new Date('2026-11-29T05:45:00.000Z') } } });
    await m.conversation.conversationAssociateGroundingTemporalRangeWorkstream({ conversation: chat, range: range.id });
    // BasicChat.ranges reads the grounding's `indices`.
    const grounded = await m.conversation.conversationGetSpecificConversation({ conversation: chat });
    expect(grounded.grounding?.temporal?.workstreams?.indices).toEqual({ [range.id]: 0 });

    const socket = await m.chat();
    // Copilot.stream_question with LTM on: relevance with the pipeline, question: true, and the conversation's ranges as temporal.
    const answer = await socket.ask({
      conversation: chat,
      relevance: {
        query: 'what happened to the deploy pipeline?',
        options: { question: true, pipeline: WORKSTREAM },
        temporal: { workstreams: { iterable: [{ id: range.id }] } },
      },
    });
    expect(answer.status).toBe('COMPLETED');
    expect(answer.cited).toEqual([m.inside]);
    expect(answer.text).toContain(`workstream event ${m.inside}`);
    expect(answer.text).toContain('deploy pipeline fixed by pinning node 22');
    expect(answer.text).not.toContain(m.outside);
    expect(answer.text).not.toContain('broke on staging');

    // The conversation's grounding alone (no temporal in the request) answers the same.
    const again = await socket.ask({
      conversation: chat,
      relevance: { query: 'what happened to the deploy pipeline?', options: { question: true, pipeline: WORKSTREAM } },
    });
    expect(again.cited).toEqual([m.inside]);
    // Both exchanges were stored in the conversation.
    const messages = (await m.conversation.conversationGetSpecificConversation({ conversation: chat })).messages;
    expect(Object.keys(messages?.indices ?? {})).toHaveLength(4);

    // Without any range (a new conversation, no temporal): all of memory, the better match first.
    const everything = await socket.ask({ relevance: { query: 'deploy pipeline', options: { question: true, pipeline: WORKSTREAM } } });
    expect(new Set(everything.cited)).toEqual(new Set([m.inside, m.outside]));

    // A range that is not stored: the answer fails with a 404 naming it.
    const unknown = crypto.randomUUID();
    const failed = await socket.ask({
      relevance: {
        query: 'deploy',
        options: { question: true, pipeline: WORKSTREAM },
        temporal: { workstreams: { iterable: [{ id: unknown }] } },
      },
    });
    expect(failed.status).toBe('FAILED');
    expect(failed.frames.at(-1)!.errorMessage).toBe(
      `No range with id ${unknown} (temporal.workstreams): create it with POST /ranges/create.`,
    );
  });

  it("(c) the C# SDK's LongTermMemory chat: the last 15 minutes, grounded from the range's side, asked by /qgpt/question and /qgpt/stream", async () => {
    const m = await memory();
    const chat = (await m.conversations.conversationsCreateSpecificConversation({ seededConversation: { type: 'COPILOT' } })).id;
    const range = await m.ranges.rangesCreateNewRange({
      seededRange: {
        from: { value: new Date('2026-11-29T05:45:00.000Z') },
        to: { value: new Date('2026-11-29T06:00:00.000Z') },
        between: true,
      },
    });
    await m.range.rangeAssociateConversationGroundingTemporalRangeWorkstreams({ range: range.id, conversation: chat });

    const output = await m.qgpt.question({
      qGPTQuestionInput: {
        query: 'deploy pipeline',
        relevant: { iterable: [] },
        pipeline: WORKSTREAM,
        temporal: { workstreams: { iterable: [{ id: range.id }] } },
      },
    });
    const text = output.answers.iterable[0]!.text;
    expect(text).toContain(`workstream event ${m.inside}`);
    expect(text).not.toContain(m.outside);

    // Over the stream, a question input in the grounded conversation.
    const socket = await m.chat();
    const streamed = await socket.ask({
      conversation: chat,
      question: { query: 'deploy pipeline', relevant: { iterable: [] }, pipeline: WORKSTREAM },
    });
    expect(streamed.status).toBe('COMPLETED');
    expect(streamed.text).toContain(`workstream event ${m.inside}`);
    expect(streamed.text).not.toContain(m.outside);

    // /qgpt/relevance with the temporal grounding: the relevant seeds are the events in the range.
    const relevant = await m.qgpt.relevance({
      qGPTRelevanceInput: { query: 'deploy pipeline', temporal: { workstreams: { iterable: [{ id: range.id }] } } },
    });
    expect(relevant.relevant.iterable.map((seed) => seed.id)).toEqual([m.inside]);
  });

  it('(b) the TUI summary view: identifier stream, GET /workstream_summary/{id}, SUMMARY and DESCRIPTION, update, delete', async () => {
    const m = await memory();
    const stream = m.stream.open('ws://localhost:1000/workstream_summaries/stream/identifiers');
    await until(() => stream.frames.length === 1, 'the identifiers on open');
    const ids = (frame: string) =>
      (JSON.parse(frame) as { iterable: Array<{ workstream_summary?: { id: string }; deleted?: boolean }> }).iterable.map((item) => [
        item.workstream_summary?.id,
        item.deleted ?? false,
      ]);
    expect(ids(stream.frames[0]!)).toEqual([]);

    const made = await m.summaries.workstreamSummariesCreateAutogeneratedWorkstreamSummary({
      autoGeneratedWorkstreamSummaryInput: {
        anonymousRanges: [{ from: { value: new Date('2026-11-29T05:45:00.000Z') }, to: { value: new Date('2026-11-29T06:00:00.000Z') } }],
      },
    });
    await until(() => stream.frames.some((frame) => ids(frame).some(([id]) => id === made.id)), 'the new summary on the stream');
    const read = await m.summary.workstreamSummariesSpecificWorkstreamSummarySnapshot({ workstreamSummary: made.id });
    expect(read.events?.iterable.map((event) => event.id)).toEqual([m.inside, m.other]);
    const notes = await Promise.all(
      Object.keys(read.annotations?.indices ?? {}).map((id) => m.annotation.annotationSpecificAnnotationSnapshot({ annotation: id })),
    );
    expect(notes.map((note) => note.type)).toEqual(['SUMMARY', 'DESCRIPTION']);
    expect(notes[0]!.text).toMatch(/^### What happened, 2026-11-29 05:45 – 2026-11-29 06:00 UTC/);
    expect(notes[1]!.text).toBe('2 events in 1 application (Code), 2 windows, 2026-11-29 05:45 – 2026-11-29 06:00 UTC.');

    const frames = stream.frames.length;
    const renamed = await m.summary.workstreamSummaryUpdate({ workstreamSummary: { ...read, name: 'Pinned node for the pipeline' } });
    expect(renamed.name).toBe('Pinned node for the pipeline');
    expect((await m.summary.workstreamSummariesSpecificWorkstreamSummarySnapshot({ workstreamSummary: made.id })).name).toBe(
      'Pinned node for the pipeline',
    );
    await until(() => stream.frames.length > frames, 'the update on the stream');

    await m.summaries.workstreamSummariesDeleteSpecificWorkstreamSummary({ workstreamSummary: made.id });
    await until(
      () => stream.frames.some((frame) => ids(frame).some(([id, deleted]) => id === made.id && deleted)),
      'the deletion on the stream',
    );
    const gone = await m.fetch(`http://localhost:1000/workstream_summary/${made.id}`);
    expect(gone.status).toBe(404);
  });
});

describe('summaries written by a model', () => {
  /** A test model: records what it was asked, answers with the names of the passages it was given. */
  function recordingModel() {
    const asked: AnswerRequest[] = [];
    const model: ModelAdapter = {
      description: 'test model',
      async *answer(request) {
        asked.push(request);
        yield 'You worked on: ';
        yield request.relevant.map((passage) => passage.text).join('; ');
      },
    };
    return { model, asked };
  }

  it('with a model configured, the SUMMARY is what it writes from the events of the range (create and regenerate)', async () => {
    const { model, asked } = recordingModel();
    const m = await memory({ model });
    const made = await m.summaries.workstreamSummariesCreateAutogeneratedWorkstreamSummary({
      autoGeneratedWorkstreamSummaryInput: {
        anonymousRanges: [{ from: { value: new Date('2026-11-29T05:45:00.000Z') }, to: { value: new Date('2026-11-29T06:00:00.000Z') } }],
      },
    });
    expect(asked).toHaveLength(1);
    expect(asked[0]!.relevant.map((passage) => passage.id)).toEqual([m.inside, m.other]);
    expect(asked[0]!.relevant[0]!.name).toBe('2026-11-29T05:50:00.000Z Code — ci.yml');
    expect(asked[0]!.query).toContain('2 events in 1 application (Code), 2 windows, 2026-11-29 05:45 – 2026-11-29 06:00 UTC');
    const [summary, description] = await Promise.all(
      Object.keys(made.annotations?.indices ?? {}).map((id) => m.annotation.annotationSpecificAnnotationSnapshot({ annotation: id })),
    );
    expect(summary!.text).toBe('You worked on: deploy pipeline fixed by pinning node 22; soup of the day');
    // The name and DESCRIPTION stay the deterministic ones.
    expect(description!.text).toBe('2 events in 1 application (Code), 2 windows, 2026-11-29 05:45 – 2026-11-29 06:00 UTC.');
    expect(made.name).toBe('Code: 2026-11-29 05:45 – 2026-11-29 06:00 UTC');

    await m.summary.workstreamSummaryRegenerateSpecificSummary({ workstreamSummary: made.id });
    expect(asked).toHaveLength(2);
    expect((await m.annotation.annotationSpecificAnnotationSnapshot({ annotation: summary!.id })).text).toBe(
      'You worked on: deploy pipeline fixed by pinning node 22; soup of the day',
    );
  });

  it('a failing model is a 502 with its message, and nothing is stored', async () => {
    const model: ModelAdapter = {
      description: 'failing',
      // biome-ignore lint/correctness/useYield: it fails before its first chunk
      async *answer() {
        throw new ModelError('The model endpoint is down.');
      },
    };
    const m = await memory({ model });
    const before = await dump(m.databaseName);
    const response = await m.fetch('http://localhost:1000/workstream_summaries/create/summary', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ anonymous_ranges: [{ from: { value: '2026-11-29T05:45:00.000Z' } }] }),
    });
    expect([response.status, await response.text()]).toEqual([502, 'The model endpoint is down.']);
    expect(await dump(m.databaseName)).toBe(before);
  });
});
