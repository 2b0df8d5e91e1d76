// @vitest-environment node
/**
 * A streamed answer on the fast path that the page stops reading (a model's
 * progress socket closed, a copilot socket closed mid-answer) is stopped in the
 * worker too: the service's stream is cancelled, so nothing keeps producing it.
 */
import { MessageChannel } from 'node:worker_threads';
import { afterEach, expect, it } from 'vitest';
import { PortClient, type ClientPort } from '../../../src/port/client.js';
import { createPortServer, type PortLike } from '../../../src/port/server.js';

const opened: Array<{ close(): void }> = [];
afterEach(() => opened.splice(0).forEach((port) => port.close()));

it('cancelling a streamed answer in the page cancels the service’s stream in the worker', async () => {
  let cancelled = false;
  let pushed = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  // An endless event stream, as a progress socket's answer is.
  const respond = async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          timer = setInterval(() => {
            pushed++;
            controller.enqueue(new TextEncoder().encode(`data: {"n":${pushed}}\n\n`));
          }, 2);
        },
        cancel() {
          cancelled = true;
          clearInterval(timer);
        },
      }),
      { headers: { 'Content-Type': 'text/event-stream' } },
    );
  const server = createPortServer(respond);
  const client = new PortClient({
    connect: async () => {
      const { port1, port2 } = new MessageChannel();
      opened.push(port1, port2);
      server.serve(port2 as unknown as PortLike);
      return { port: port1 as unknown as ClientPort, instance: server.instance, worker: 'w' };
    },
    fetch: async () => respond(),
  });
  const response = await client.request(new Request('http://localhost:1000/model/x/download/progress'));
  const reader = response.body!.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  expect(first).toMatch(/^data: \{"n":\d+\}/);
  await reader.cancel();
  for (let i = 0; i < 100 && !cancelled; i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(cancelled).toBe(true);
  const after = pushed;
  await new Promise((resolve) => setTimeout(resolve, 30));
  expect(pushed).toBe(after);
  clearInterval(timer);
});
