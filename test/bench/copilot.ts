/**
 * The copilot's part of the benchmark, run in the `ours` page:
 *   - relevance over N stored assets (10,000 in a full run), warm: the index
 *     is built by the first request, then each request ranks the whole store;
 *     and the first request after the worker was stopped (the index kept in IndexedDB);
 *   - /qgpt/stream against calling the same OpenAI-compatible endpoint (the
 *     fake one, on 127.0.0.1) directly from the page: time to the first chunk
 *     and chunk throughput, interleaved, as ratios (the overhead the service adds).
 */
import type { Page } from 'playwright-core';
import { startFakeOpenAi } from '../fake-openai.js';
import { median, p95 } from './stats.js';

export interface CopilotPlan {
  assets: number;
  relevanceRepeats: number;
  /** First requests after a worker stop. */
  coldRelevance: number;
  streamRepeats: number;
  /** Chunks per streamed answer (each as long as this number, in characters). */
  chunks: number;
}

declare global {
  interface Window {
    pieces: {
      addAssets(assets: Array<{ name: string; text: string }>): Promise<void>;
      setModel(model?: { type: 'openai'; baseUrl: string; model: string; maxTokens?: number }): Promise<string>;
    };
  }
}

/** Synthetic assets: words of a fixed vocabulary picked by a seeded generator, in code-like lines. */
function assets(count: number) {
  const vocabulary = (
    'retry backoff debounce throttle cache memoize parse serialize fetch request response stream buffer ' +
    'socket timeout promise async await queue worker thread lock mutex channel event listener handler ' +
    'router route path query param header cookie session token auth user account profile config option ' +
    'logger metric trace span error panic recover assert test mock fixture render component state store ' +
    'reducer action effect hook context provider index search rank score vector matrix tensor graph node'
  ).split(' ');
  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const word = () => vocabulary[Math.floor(random() * vocabulary.length)]!;
  const extensions = ['ts', 'py', 'go', 'rs', 'js', 'java'];
  return Array.from({ length: count }, (_, i) => {
    const lines = Array.from(
      { length: 12 },
      () => `function ${word()}${word()[0]!.toUpperCase()}${word().slice(1)}(${word()}) { return ${word()}(${word()}, ${word()}); }`,
    );
    return { name: `${word()}_${word()}_${i}.${extensions[i % extensions.length]}`, text: lines.join('\n') };
  });
}

/** Runs in the page: one relevance request over the whole store; its time in ms. */
async function ask(query: string): Promise<number> {
  const start = performance.now();
  const response = await fetch('http://localhost:1000/qgpt/relevance', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ query, options: { database: true } }),
  });
  const body = (await response.json()) as { relevant: { iterable: unknown[] } };
  if (body.relevant.iterable.length === 0) throw new Error(`nothing found for ${query}`);
  return performance.now() - start;
}

/** `stop`: stops the worker (the next request starts it afresh). */
export async function benchCopilot(page: Page, plan: CopilotPlan, stop: () => Promise<void>) {
  const fake = await startFakeOpenAi();
  try {
    // Relevance.
    const stored = assets(plan.assets);
    for (let i = 0; i < stored.length; i += 1000) await page.evaluate((batch) => window.pieces.addAssets(batch), stored.slice(i, i + 1000));
    const first = await page.evaluate(ask, 'retry with backoff');
    const queries = ['retry with exponential backoff', 'debounce the search handler', 'parse the request header', 'cache the graph node'];
    const warm: number[] = [];
    for (let i = 0; i < plan.relevanceRepeats; i++) warm.push(await page.evaluate(ask, queries[i % queries.length]!));
    // The first request after the worker was stopped, some time after the last write (as after real use:
    // anything kept for a cold start has been kept).
    const cold: number[] = [];
    for (let i = 0; i < plan.coldRelevance; i++) {
      await new Promise((r) => setTimeout(r, 3_000));
      await stop();
      cold.push(await page.evaluate(ask, queries[i % queries.length]!));
    }
    const relevance = { first, warm, cold };

    // The stream against the endpoint called directly, interleaved.
    await page.evaluate(({ baseUrl, chunks }) => window.pieces.setModel({ type: 'openai', baseUrl, model: 'count', maxTokens: chunks }), {
      baseUrl: fake.baseUrl,
      chunks: plan.chunks,
    });
    const runs = await page.evaluate(streamRuns, {
      baseUrl: fake.baseUrl,
      model: 'count',
      chunks: plan.chunks,
      repeats: plan.streamRepeats,
    });
    await page.evaluate(() => window.pieces.setModel());
    const summary = (list: Array<{ first: number; last: number; count: number }>) => {
      if (list.some((r) => r.count !== plan.chunks)) throw new Error(`expected ${plan.chunks} chunks, got ${list.map((r) => r.count)}`);
      // Throughput over the whole answer: chunks per second from the request to the last chunk.
      const throughput = list.map((r) => (r.count / r.last) * 1000);
      return {
        firstChunk: median(list.map((r) => r.first)),
        firstChunkP95: p95(list.map((r) => r.first)),
        lastChunk: median(list.map((r) => r.last)),
        lastChunkP95: p95(list.map((r) => r.last)),
        chunksPerSecond: median(throughput),
        n: list.length,
      };
    };
    const stream = summary(runs.stream);
    const direct = summary(runs.direct);
    return {
      relevance: {
        assets: plan.assets,
        first: relevance.first,
        warm: { median: median(relevance.warm), p95: p95(relevance.warm), n: relevance.warm.length },
        cold: { median: median(relevance.cold), p95: p95(relevance.cold), n: relevance.cold.length, all: relevance.cold },
      },
      stream,
      direct,
      // Ours against direct: above 1 is faster than direct (direct's time over ours', our rate over direct's).
      ratio: {
        firstChunk: direct.firstChunk / stream.firstChunk,
        lastChunk: direct.lastChunk / stream.lastChunk,
        throughput: stream.chunksPerSecond / direct.chunksPerSecond,
      },
      chunks: plan.chunks,
    };
  } finally {
    await fake.close();
  }
}

/** Runs in the page: `repeats` answers through /qgpt/stream and as many from the endpoint directly, interleaved; first and last chunk (ms). */
export async function streamRuns({ baseUrl, model, chunks, repeats }: { baseUrl: string; model: string; chunks: number; repeats: number }) {
  const socket = new WebSocket('ws://localhost:1000/qgpt/stream');
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  type Run = { first: number; last: number; count: number };
  const viaStream = (request: string) =>
    new Promise<Run>((resolve, reject) => {
      let first = 0;
      let last = 0;
      let count = 0;
      const start = performance.now();
      socket.onmessage = (event) => {
        const frame = JSON.parse(event.data) as { request: string; status: string; errorMessage?: string };
        if (frame.request !== request) return;
        if (frame.status === 'IN-PROGRESS') {
          last = performance.now() - start;
          if (count++ === 0) first = last;
        } else if (frame.status === 'COMPLETED') resolve({ first, last, count });
        else if (frame.status === 'FAILED') reject(new Error(frame.errorMessage));
      };
      socket.send(JSON.stringify({ request, question: { query: 'count', relevant: { iterable: [] } } }));
    });
  const direct = async (): Promise<Run> => {
    const start = performance.now();
    const response = await fetch(`${baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ model, stream: true, max_tokens: chunks, messages: [{ role: 'user', content: 'count' }] }),
    });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let first = 0;
    let last = 0;
    let count = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += value;
      const events = buffer.split('\n\n');
      buffer = events.pop()!;
      for (const event of events) {
        const data = event.replace(/^data: /, '');
        if (data === '[DONE]') continue;
        if (!(JSON.parse(data) as { choices: Array<{ delta: { content?: string } }> }).choices[0]!.delta.content) continue;
        last = performance.now() - start;
        if (count++ === 0) first = last;
      }
    }
    return { first, last, count };
  };
  const runs = { stream: [] as Run[], direct: [] as Run[] };
  await viaStream('warm-up');
  await direct();
  for (let i = 0; i < repeats; i++) {
    const pair = [async () => runs.stream.push(await viaStream(`r${i}`)), async () => runs.direct.push(await direct())];
    if (i % 2) pair.reverse();
    for (const run of pair) await run();
  }
  socket.close();
  return runs;
}
