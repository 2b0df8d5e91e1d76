// @vitest-environment node
/**
 * A streamed answer on the fast path that the page stops reading (a model's
 * progress socket closed, a copilot socket closed mid-answer) is stopped in the
 * worker too: the service's stream is cancelled, so nothing keeps producing it.
 */
import { afterEach, expect, it } from 'vitest';
import { closePorts, joined } from '../support/ports.js';

afterEach(closePorts);

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
  const { client } = joined(respond);
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
