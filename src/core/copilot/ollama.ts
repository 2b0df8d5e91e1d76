/**
 * The adapter for a model served by Ollama: it answers through Ollama's
 * OpenAI-compatible endpoint (`<baseUrl>/v1/chat/completions`), a download pulls
 * the model through Ollama's pull API (`POST <baseUrl>/api/pull`, one JSON
 * object per line: `{status, digest?, total?, completed?}`, `{error}` on a
 * failure, `{status: "success"}` at the end), and deleting a download deletes
 * the model there (`DELETE <baseUrl>/api/delete`).
 */
import { ModelError, type ModelAdapter, type OllamaModelConfig } from './model.js';
import { openAiModel } from './openai.js';

/** The message of an error body (`{error}`), or the text. */
function errorMessage(body: string): string {
  try {
    const json = JSON.parse(body) as { error?: unknown };
    if (typeof json.error === 'string') return json.error;
  } catch {
    // Not JSON: the text itself.
  }
  return body.trim().slice(0, 500) || 'no message';
}

/** How long a pull's parsing holds the thread at most before other work gets its turn. */
const GIVE_WAY_MS = 2;

/** Reads a body of JSON lines, giving each parsed object to `each`. */
async function readLines(
  body: ReadableStream<Uint8Array>,
  each: (line: Record<string, unknown>) => void,
  fail: (message: string) => Error,
) {
  // The bytes decoded as they come, without a stream stage of their own (a pull's thousands of
  // short reads would each pass through it).
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let rest = '';
  // A fast pull's lines arrive back to back, each read a microtask: the loop gives way every
  // GIVE_WAY_MS, so that the progress frames' timer and the other requests get their turn.
  let gaveWay = performance.now();
  try {
    for (;;) {
      if (performance.now() - gaveWay > GIVE_WAY_MS) {
        await new Promise((resolve) => setTimeout(resolve, 0));
        gaveWay = performance.now();
      }
      const { done, value } = await reader.read();
      if (done) {
        rest += decoder.decode();
        break;
      }
      rest += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = rest.indexOf('\n')) >= 0) {
        const line = rest.slice(0, end).trim();
        rest = rest.slice(end + 1);
        if (!line) continue;
        let parsed: unknown;
        try {
          parsed = JSON.parse(line);
        } catch {
          throw fail(`sent a line that is not JSON: ${line.slice(0, 200)}`);
        }
        if (parsed && typeof parsed === 'object') each(parsed as Record<string, unknown>);
      }
    }
    if (rest.trim()) {
      try {
        each(JSON.parse(rest) as Record<string, unknown>);
      } catch {
        throw fail(`sent a line that is not JSON: ${rest.slice(0, 200)}`);
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

export function ollamaModel(config: OllamaModelConfig): ModelAdapter {
  const base = config.baseUrl.replace(/\/+$/, '');
  const chat = openAiModel({ ...config, type: 'openai', baseUrl: `${base}/v1` });
  return {
    description: `${config.model} at ${base} (Ollama)`,
    endpoint: { type: 'ollama', baseUrl: base, model: config.model },
    answer: (request) => chat.answer(request),

    async pull(signal, progress) {
      const url = `${base}/api/pull`;
      const fail = (message: string) => new ModelError(`Ollama at ${url} ${message}`);
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ model: config.model, stream: true }),
          signal,
        });
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        throw fail(`could not be reached: ${(error as Error).message}.`);
      }
      if (!response.ok) throw fail(`answered ${response.status}: ${errorMessage(await response.text().catch(() => ''))}`);
      if (!response.body) throw fail('answered with no body.');
      // Each layer (digest) reports its own total and completed bytes: the fraction is over all of them.
      const layers = new Map<string, { total: number; completed: number }>();
      let succeeded = false;
      try {
        await readLines(
          response.body,
          (line) => {
            if (typeof line.error === 'string') throw fail(`failed to pull ${config.model}: ${line.error}`);
            if (line.status === 'success') succeeded = true;
            const { digest, total, completed } = line;
            if (typeof digest === 'string' && typeof total === 'number' && total > 0) {
              layers.set(digest, { total, completed: typeof completed === 'number' ? Math.min(completed, total) : 0 });
              let all = 0;
              let done = 0;
              for (const layer of layers.values()) {
                all += layer.total;
                done += layer.completed;
              }
              progress(done / all);
            }
          },
          fail,
        );
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        if (error instanceof ModelError) throw error;
        throw fail(`failed mid-pull: ${(error as Error).message}.`);
      }
      if (!succeeded) throw fail(`closed the pull of ${config.model} before it succeeded.`);
    },

    async remove() {
      const url = `${base}/api/delete`;
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'DELETE',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ model: config.model }),
        });
      } catch (error) {
        throw new ModelError(`Ollama at ${url} could not be reached: ${(error as Error).message}.`);
      }
      // Not there (any more) is what a delete wants.
      if (!response.ok && response.status !== 404) {
        throw new ModelError(`Ollama at ${url} answered ${response.status}: ${errorMessage(await response.text().catch(() => ''))}`);
      }
    },
  };
}
