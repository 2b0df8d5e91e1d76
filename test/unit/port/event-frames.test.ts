// @vitest-environment node
/**
 * An event stream made of frames (the copilot stream's answers, src/core/event-frames.ts): read as
 * bytes it is the same event stream; over the fast path's port it goes as frames, which the page
 * reads as they came (nothing encoded in the worker, nothing parsed in the page), cancels, and a
 * replay by fetch gets as the same bytes.
 */
import { MessagePort } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventFrames, eventStream, eventText, framesOf } from '../../../src/core/event-frames.js';
import { ID_HEADER, REPLAY_HEADER, type ToPage, type ToWorker } from '../../../src/port/protocol.js';
import { createPortServer } from '../../../src/port/server.js';
import { installStreamShim } from '../../../src/stream/shim.js';
import { channel, closePorts, joined } from '../support/ports.js';

afterEach(closePorts);

const HEADERS = { 'Content-Type': 'text/event-stream; charset=utf-8' };

/** An answer the test makes frame by frame, and whether its reader cancelled it. */
function framed() {
  const state = { cancelled: false, frames: new EventFrames(() => (state.cancelled = true)) };
  return state;
}

const post = (body = '{}', headers: Record<string, string> = {}) =>
  new Request('http://localhost:1000/qgpt/stream', { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });

describe('event frames', () => {
  it('read as a body, are the event stream of the frames in order, pushed together or not', async () => {
    const { frames } = framed();
    const response = eventStream(frames, { headers: HEADERS });
    frames.push(['{"a":1}', '{"b":2}']);
    frames.push(['{"c":3}']);
    frames.close();
    expect(await response.text()).toBe('data: {"a":1}\n\ndata: {"b":2}\n\ndata: {"c":3}\n\n');
    expect(framesOf(response)).toBe(frames);
    expect(framesOf(new Response('x'))).toBeUndefined();
  });

  it('read as frames, give every frame queued since the last read, then null once closed', async () => {
    const { frames } = framed();
    frames.push(['1', '2']);
    frames.push(['3']);
    expect(await frames.next()).toEqual(['1', '2', '3']);
    const waiting = frames.next();
    frames.push(['4']);
    expect(await waiting).toEqual(['4']);
    frames.close();
    frames.push(['late']);
    expect(await frames.next()).toBeNull();
  });

  it('a body is encoded only as it is read: nothing is taken from the frames before', async () => {
    const { frames } = framed();
    const response = eventStream(frames, { headers: HEADERS });
    frames.push(['first']);
    await new Promise((resolve) => setTimeout(resolve, 5));
    // Still there for a reader of frames (the body read nothing ahead).
    expect(await frames.next()).toEqual(['first']);
    frames.close();
    expect(await response.text()).toBe('');
  });

  it('cancelling tells the maker once and drops what is queued; failing rejects the reader', async () => {
    const state = framed();
    state.frames.push(['1']);
    state.frames.cancel();
    state.frames.cancel();
    expect(state.cancelled).toBe(true);
    expect(await state.frames.next()).toBeNull();
    const broken = framed();
    broken.frames.push(['1']);
    broken.frames.fail(new TypeError('Failed to fetch: gone'));
    await expect(broken.frames.next()).rejects.toThrow('Failed to fetch: gone');
    expect(broken.cancelled).toBe(false);
  });
});

describe('event frames over the fast path', () => {
  it('go as frames messages to a page that takes them, and arrive as the frames they were', async () => {
    const { frames } = framed();
    const posted: ToPage[] = [];
    const send = MessagePort.prototype.postMessage;
    const spy = vi.spyOn(MessagePort.prototype, 'postMessage').mockImplementation(function (
      this: MessagePort,
      ...args: Parameters<MessagePort['postMessage']>
    ) {
      posted.push(args[0] as ToPage);
      return send.apply(this, args);
    });
    try {
      const { client } = joined(async () => eventStream(frames, { headers: HEADERS }));
      const response = await client.request(post());
      expect(response.headers.get('content-type')).toBe(HEADERS['Content-Type']);
      const received = framesOf(response)!;
      expect(received).toBeDefined();
      frames.push(['{"n":1}', '{"n":2}']);
      expect(await received.next()).toEqual(['{"n":1}', '{"n":2}']);
      frames.push(['{"n":3}']);
      frames.close();
      expect(await received.next()).toEqual(['{"n":3}']);
      expect(await received.next()).toBeNull();
      const types = posted.map((m) => m.type).filter((type) => !['ready', 'accepted', 'request'].includes(type));
      expect(types).toEqual(['head', 'frames', 'frames', 'end']);
      expect(posted.find((m) => m.type === 'head')).toMatchObject({ frames: true });
    } finally {
      spy.mockRestore();
    }
  });

  it('are the same event stream to a reader of the body in the page', async () => {
    const { frames } = framed();
    const { client } = joined(async () => eventStream(frames, { headers: HEADERS }));
    const response = await client.request(post());
    frames.push(['{"n":1}']);
    frames.push(['{"n":2}', '{"n":3}']);
    frames.close();
    expect(await response.text()).toBe(eventText(['{"n":1}', '{"n":2}', '{"n":3}']));
  });

  it('go as bytes to a page that does not take frames (an older page library)', async () => {
    const { frames } = framed();
    const server = createPortServer(async () => eventStream(frames, { headers: HEADERS }));
    const { page, worker } = channel();
    const received: ToPage[] = [];
    const ended = new Promise<void>((resolve) => {
      page.onmessage = (event) => {
        const message = event.data as ToPage;
        received.push(message);
        if (message.type === 'end') resolve();
      };
    });
    server.serve(worker);
    const message: ToWorker = {
      type: 'request',
      id: 'r1',
      sent: Date.now(),
      method: 'POST',
      url: 'http://localhost:1000/qgpt/stream',
      headers: [],
      body: null,
      whole: true,
    };
    page.postMessage(message);
    frames.push(['{"n":1}']);
    frames.close();
    await ended;
    expect(received.map((m) => m.type)).toEqual(['ready', 'accepted', 'head', 'chunk', 'end']);
    const chunk = received.find((m) => m.type === 'chunk') as Extract<ToPage, { type: 'chunk' }>;
    expect(new TextDecoder().decode(chunk.chunk)).toBe('data: {"n":1}\n\n');
  });

  it('a page that stops reading cancels the frames in the worker: the maker is told', async () => {
    const state = framed();
    const { client } = joined(async () => eventStream(state.frames, { headers: HEADERS }));
    const received = framesOf(await client.request(post()))!;
    state.frames.push(['{"n":1}']);
    expect(await received.next()).toEqual(['{"n":1}']);
    received.cancel();
    for (let i = 0; i < 100 && !state.cancelled; i++) await new Promise((resolve) => setTimeout(resolve, 2));
    expect(state.cancelled).toBe(true);
  });

  it('a replay by fetch of a write sent as frames is answered from memory with the same event stream, not run again', async () => {
    const state = framed();
    let ran = 0;
    const { server, client } = joined(async () => {
      ran++;
      return eventStream(state.frames, { headers: HEADERS });
    });
    const sent: string[] = [];
    const send = MessagePort.prototype.postMessage;
    const spy = vi.spyOn(MessagePort.prototype, 'postMessage').mockImplementation(function (
      this: MessagePort,
      ...args: Parameters<MessagePort['postMessage']>
    ) {
      if ((args[0] as ToWorker).type === 'request') sent.push((args[0] as Extract<ToWorker, { type: 'request' }>).id);
      return send.apply(this, args);
    });
    try {
      const received = framesOf(await client.request(post('{"question":1}')))!;
      state.frames.push(['{"n":1}', '{"n":2}']);
      state.frames.push(['{"n":3}']);
      state.frames.close();
      while (await received.next());
    } finally {
      spy.mockRestore();
    }
    // The page retries it by fetch, as after a port it judged dead (acknowledged: replay only).
    const retry = post('{"question":1}', { [ID_HEADER]: sent[0]!, [REPLAY_HEADER]: 'only' });
    const replayed = await server.answerRetry(retry)!;
    expect(await replayed.text()).toBe(eventText(['{"n":1}', '{"n":2}', '{"n":3}']));
    expect(ran).toBe(1);
  });

  it('an answer that breaks off in the worker fails the page reader like a dropped connection', async () => {
    const { frames } = framed();
    const { client } = joined(async () => eventStream(frames, { headers: HEADERS }));
    const received = framesOf(await client.request(post()))!;
    frames.push(['{"n":1}']);
    expect(await received.next()).toEqual(['{"n":1}']);
    frames.fail(new Error('disk gone'));
    await expect(received.next()).rejects.toThrow(/Failed to fetch: disk gone/);
  });

  it('a progress socket delivers frames that came as frames as they are (the body never read), and stops them when it closes', async () => {
    const progress = (percentage: number) => JSON.stringify({ status: 'IN-PROGRESS', percentage });
    const state = framed();
    const { frames } = state;
    const response = eventStream(frames, { headers: HEADERS });
    const target = { WebSocket: class {} as unknown as typeof WebSocket };
    let asked = 0;
    // A second request would get an answer that never ends (none is expected: the socket closed).
    const fetch = async () => (asked++ === 0 ? response : eventStream(new EventFrames(), { headers: HEADERS }));
    const uninstall = installStreamShim({ target, fetch, isServiceAvailable: () => true });
    try {
      const socket = new target.WebSocket('ws://localhost:1000/model/x/download/progress');
      const got: string[] = [];
      socket.onmessage = (event) => got.push(String(event.data));
      await new Promise((resolve) => (socket.onopen = resolve));
      frames.push([progress(1), progress(2)]);
      frames.push([progress(3)]);
      for (let i = 0; i < 100 && got.length < 3; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(got).toEqual([progress(1), progress(2), progress(3)]);
      expect(response.bodyUsed).toBe(false);
      socket.close();
      for (let i = 0; i < 100 && !state.cancelled; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(state.cancelled).toBe(true);
      expect(asked).toBe(1);
    } finally {
      uninstall();
    }
  });
});
