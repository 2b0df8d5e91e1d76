/**
 * The copilot stream (`/qgpt/stream`): each client frame arrives as a POST from the socket shim and is
 * answered with its QGPTStreamOutput frames as server-sent events (IN-PROGRESS chunks, then COMPLETED,
 * FAILED, STOPPED or RESET; no INITIALIZED); answers are stored as messages (docs/copilot.md).
 */
import type { OperationContext, ServiceContext } from '../context.js';
import { ModelError, type ChatMessage, type RelevantMaterial } from '../copilot/model.js';
import { messageMaterial } from '../copilot/corpus.js';
import { EventFrames } from '../event-frames.js';
import { HttpError, readJson, reply } from '../http.js';
import { derivedName, messageRecord, seedConversation, seedMessage, touched } from '../models/conversation.js';
import type { Change } from '../../storage/storage.js';
import { parseStreamInput, questionOutput, type StreamInput } from '../models/qgpt.js';
import { isObject, type JsonObject } from '../validate.js';
import { STREAM_HEADER, type StreamRequestKind } from '../stream-wire.js';
import { atOnce } from '../clock.js';
import { untilAborted } from '../../shared/abort.js';
import { say } from '../../shared/console.js';
import {
  asMaterial,
  findRelevant,
  questionHistory,
  questionMaterial,
  questionMaterialOrStore,
  relevantSeeds,
  workstreamMaterial,
} from './qgpt.js';

/** The marker header value the socket shim sends with each client frame. */
const QGPT_STREAM_MARKER: StreamRequestKind = 'qgpt';

type Status = 'IN-PROGRESS' | 'COMPLETED' | 'FAILED' | 'STOPPED' | 'RESET';

export async function qgptStream({ request, service }: OperationContext): Promise<Response> {
  if (request.method !== 'POST' || request.headers.get(STREAM_HEADER) !== QGPT_STREAM_MARKER) {
    throw new HttpError(426, 'The copilot stream is a WebSocket: connect with new WebSocket("ws://…/qgpt/stream").', {
      Upgrade: 'websocket',
    });
  }
  const body = await readJson(request, service.maxBodyBytes);
  const disconnected = new AbortController();
  const frames = new EventFrames(() => disconnected.abort());
  // Frames go out together: one piece of the body (one message to the page) instead of one per
  // frame; each frame stays its own event, so the socket still delivers one message per frame, in
  // order. When the model says it waits for more (an adapter that calls `waiting`), what it yielded
  // since goes out then; otherwise the first frame of a task goes out at once and the frames the
  // same task makes after it when the task is over.
  let pending: string[] = [];
  let flushing: ReturnType<typeof setTimeout> | undefined;
  /** The model said it waits for more at least once: its frames are sent when it does. */
  let told = false;
  const flush = () => {
    clearTimeout(flushing);
    flushing = undefined;
    if (pending.length === 0) return;
    // Dropped by the frames once their reader stopped.
    frames.push(pending);
    pending = [];
  };
  const send = (frame: string) => {
    if (disconnected.signal.aborted) return;
    pending.push(frame);
    if (flushing) return;
    if (!told) flush();
    flushing = setTimeout(flush, 0);
  };
  const waiting = () => {
    told = true;
    flush();
  };
  void answer(service, body, send, waiting, disconnected.signal).finally(() => {
    clearTimeout(flushing);
    flush();
    frames.close();
  });
  return reply(frames);
}

function frame(request: string, conversation: string, status: Status, extra: JsonObject = {}): string {
  return JSON.stringify({ request, conversation, status, ...extra });
}

/**
 * The IN-PROGRESS frame of one chunk of an answer's text, made from the frame's JSON written once per
 * answer: the same text as `frame(…, {question: questionOutput(chunk)})`, without building and
 * serializing the whole frame for every chunk.
 */
function textFrames(request: string, conversation: string): (chunk: string) => string {
  const marker = '\u0000';
  const whole = frame(request, conversation, 'IN-PROGRESS', { question: questionOutput(marker) });
  // The text is the frame's last string (after the ids, which may hold anything).
  const at = whole.lastIndexOf(JSON.stringify(marker));
  const before = whole.slice(0, at);
  const after = whole.slice(at + JSON.stringify(marker).length);
  return (chunk) => before + JSON.stringify(chunk) + after;
}

/** A stored conversation's messages as history, oldest first; undefined when there is no such conversation. */
async function storedHistory(service: ServiceContext, id: string): Promise<ChatMessage[] | undefined> {
  const state = await service.storage.getConversation(id);
  return state?.messages.flatMap((record) => {
    const material = messageMaterial(record);
    return material ? [{ role: material.role as ChatMessage['role'], text: material.text }] : [];
  });
}

/**
 * Stores the question and its answer (when there is one) as messages of the
 * conversation, in one transaction; `create`: a new conversation with that id,
 * named after the question.
 */
async function storeExchange(service: ServiceContext, conversation: string, create: boolean, query: string, answer: string) {
  const clock = atOnce(service.clock);
  const seeded = [
    { role: 'USER', fragment: { string: { raw: query } } },
    ...(answer ? [{ role: 'ASSISTANT', fragment: { string: { raw: answer } } }] : []),
  ];
  let changes: Change[];
  if (create) {
    const built = seedConversation({ type: 'COPILOT', messages: seeded }, clock, conversation);
    const name = derivedName(built.messages) ?? 'New conversation';
    changes = await service.storage.createConversation(
      { ...built.record, json: touched(built.record, clock, (c) => (c.name = name)) },
      built.messages,
    );
  } else {
    const records = seeded.map((message) => messageRecord(seedMessage(message, 'message', clock, conversation)));
    const result = await service.storage.editConversation({ conversation }, (current) => ({
      record: {
        ...current.record,
        json: touched(current.record, clock),
        messageIds: [...current.record.messageIds, ...records.map((r) => r.id)],
      },
      putMessages: records,
    }));
    if (!result) throw new HttpError(404, `No conversation with id ${conversation}: it was deleted while the answer was written.`);
    changes = result.changes;
  }
  for (const change of changes) service.notify(change);
}

async function answer(
  service: ServiceContext,
  body: unknown,
  send: (frame: string) => void,
  waiting: () => void,
  disconnected: AbortSignal,
) {
  const sent = isObject(body) ? body : {};
  let input: StreamInput;
  try {
    input = parseStreamInput(body);
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    const request = typeof sent.request === 'string' ? sent.request : service.clock.newId();
    const conversation = typeof sent.conversation === 'string' ? sent.conversation : '';
    send(frame(request, conversation, 'FAILED', { statusCode: error.status, errorMessage: error.message }));
    return;
  }
  const { copilot } = service;
  const request = input.request ?? service.clock.newId();

  if (input.stop || input.reset) {
    const status = input.reset ? 'RESET' : 'STOPPED';
    const stopped = copilot.stop({ request: input.request, conversation: input.conversation }, status);
    // A reset is acknowledged even when nothing was running; a stop only ends what runs.
    if (input.reset && stopped === 0) send(frame(request, input.conversation ?? '', 'RESET'));
    return;
  }

  const create = !input.conversation;
  const conversation = input.conversation ?? service.clock.newId();
  const fail = (status: number, message: string) =>
    send(frame(request, conversation, 'FAILED', { statusCode: status, errorMessage: message }));
  if (copilot.running.has(request)) {
    fail(409, `The request ${request} is already being answered; send another request id.`);
    return;
  }
  const controller = new AbortController();
  disconnected.addEventListener('abort', () => controller.abort('DISCONNECTED'), { once: true });
  copilot.running.set(request, { conversation, controller });
  const query = input.question?.query ?? input.relevance!.query;
  let text = '';
  try {
    const history = create ? [] : await storedHistory(service, conversation);
    if (!history) throw new HttpError(404, `No conversation with id ${conversation}.`);

    let relevant: RelevantMaterial[] = [];
    /** The relevance found, until the first frame carried it. */
    let relevance: JsonObject | undefined;
    if (input.relevance?.workstream) {
      // Long-term memory: the workstream of the ranges the request or the conversation is grounded on.
      const found = await workstreamMaterial(service, query, input.relevance.workstream, input.conversation);
      relevance = { relevant: found.seeds };
      relevant = found.relevant;
    } else if (input.relevance) {
      const found = await findRelevant(service, input.relevance);
      relevance = { relevant: await relevantSeeds(service, input.relevance.query, found) };
      relevant = found.map(asMaterial);
    }
    if (!input.question && !input.relevance?.question) {
      send(frame(request, conversation, 'IN-PROGRESS', { relevance: relevance! }));
      send(frame(request, conversation, 'COMPLETED'));
      return;
    }
    if (input.question) {
      relevant = input.relevance
        ? [...relevant, ...(await questionMaterial(service, input.question.relevant))]
        : input.question.workstream && input.question.relevant.length === 0
          ? (await workstreamMaterial(service, query, input.question.workstream, input.conversation)).relevant
          : await questionMaterialOrStore(service, query, input.question.relevant);
      history.push(...(await questionHistory(service, input.question.messages)));
    }
    const model = input.question?.model ?? input.relevance?.model;
    const textFrame = textFrames(request, conversation);
    const adapter = await copilot.model(model);
    const streamed = (async () => {
      for await (const chunk of adapter.answer({ query, relevant, messages: history, signal: controller.signal, waiting })) {
        if (controller.signal.aborted) break;
        text += chunk;
        if (relevance) send(frame(request, conversation, 'IN-PROGRESS', { relevance, question: questionOutput(chunk) }));
        else send(textFrame(chunk));
        relevance = undefined;
      }
    })();
    // A stop, reset or disconnect ends the answer at once, even from a model that does not heed
    // its signal (a custom adapter waiting on something else): what it yields after is dropped.
    await untilAborted(streamed, controller.signal);
    // An answer without text still reports its relevance before it completes.
    if (relevance && !controller.signal.aborted) send(frame(request, conversation, 'IN-PROGRESS', { relevance }));
    if (controller.signal.aborted) throw controller.signal.reason;
    await storeExchange(service, conversation, create, query, text);
    send(frame(request, conversation, 'COMPLETED'));
  } catch (error) {
    const reason = controller.signal.aborted ? controller.signal.reason : undefined;
    if (reason === 'STOPPED' || reason === 'RESET') {
      try {
        await storeExchange(service, conversation, create, query, text);
        send(frame(request, conversation, reason));
      } catch (storeError) {
        send(frame(request, conversation, 'FAILED', failure(storeError)));
      }
    } else if (reason !== 'DISCONNECTED') {
      send(frame(request, conversation, 'FAILED', failure(error)));
    }
  } finally {
    copilot.running.delete(request);
  }
}

function failure(error: unknown): JsonObject {
  if (error instanceof HttpError) return { statusCode: error.status, errorMessage: error.message };
  if (error instanceof ModelError) return { statusCode: 502, errorMessage: error.message };
  if ((error as { name?: string })?.name === 'QuotaExceededError') {
    return { statusCode: 507, errorMessage: 'The browser storage is full: the answer was not stored. Free some space and try again.' };
  }
  say('error', 'copilot stream error', error);
  return { statusCode: 500, errorMessage: `Internal error: ${(error as Error)?.message ?? String(error)}.` };
}
