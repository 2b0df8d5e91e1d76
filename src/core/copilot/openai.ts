/**
 * The model adapter for an OpenAI-compatible chat-completions endpoint (OpenAI, a local Ollama,
 * llama.cpp, vLLM…): the answer streams as server-sent events, failures are ModelErrors.
 */
import { createParser } from 'eventsource-parser';
import type { AnswerRequest, ChatMessage, ModelAdapter, OpenAiModelConfig, RelevantMaterial } from './model.js';
import { ModelError } from './model.js';

const SYSTEM_PROMPT =
  'You are a coding assistant. Answer the question using the material below when it is relevant, ' +
  'quote code exactly, and say so when the material does not answer it.';

/** The most material sent to the model, in characters. */
const MATERIAL_BUDGET = 24_000;

function materialPrompt(relevant: readonly RelevantMaterial[]): string {
  let budget = MATERIAL_BUDGET;
  const parts: string[] = [];
  for (const item of relevant) {
    if (budget <= 0) break;
    const text = item.text.slice(0, budget);
    budget -= text.length;
    const title = item.name ?? item.id ?? `material ${parts.length + 1}`;
    parts.push(`### ${title}${item.language ? ` (${item.language})` : ''}\n\`\`\`${item.language ?? ''}\n${text}\n\`\`\``);
  }
  return parts.length ? `${SYSTEM_PROMPT}\n\n## Material\n\n${parts.join('\n\n')}` : SYSTEM_PROMPT;
}

const ROLES: Record<ChatMessage['role'], string> = { USER: 'user', ASSISTANT: 'assistant', SYSTEM: 'system', UNKNOWN: 'user' };

/** The chat-completions request body for a question. */
export function chatRequest(config: OpenAiModelConfig, request: Omit<AnswerRequest, 'signal'>) {
  return {
    model: config.model,
    stream: true,
    messages: [
      { role: 'system', content: materialPrompt(request.relevant) },
      ...request.messages.filter((m) => m.text.trim()).map((m) => ({ role: ROLES[m.role], content: m.text })),
      { role: 'user', content: request.query },
    ],
    ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
    ...(config.maxTokens === undefined ? {} : { max_tokens: config.maxTokens }),
  };
}

/** The message of an error body: OpenAI's `{error:{message}}`, Ollama's `{error}`, or the text. */
function errorMessage(body: string): string {
  try {
    const json = JSON.parse(body) as { error?: string | { message?: string }; message?: string };
    const message = typeof json.error === 'string' ? json.error : (json.error?.message ?? json.message);
    if (message) return message;
  } catch {
    // Not JSON: the text itself.
  }
  return body.trim().slice(0, 500) || 'no message';
}

interface Delta {
  error?: unknown;
  choices?: Array<{ delta?: { content?: string | null }; message?: { content?: string | null }; finish_reason?: string | null }>;
}

export function openAiModel(config: OpenAiModelConfig): ModelAdapter {
  const url = `${config.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const fail = (message: string) => new ModelError(`The model endpoint ${url} ${message}`);
  return {
    description: `${config.model} at ${config.baseUrl}`,
    endpoint: { type: 'openai', baseUrl: config.baseUrl, model: config.model, ...(config.apiKey ? { apiKey: config.apiKey } : {}) },
    async *answer({ signal, waiting, ...request }) {
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            Accept: 'text/event-stream',
            ...(config.apiKey ? { Authorization: `Bearer ${config.apiKey}` } : {}),
          },
          body: JSON.stringify(chatRequest(config, request)),
          signal,
        });
      } catch (error) {
        if (signal.aborted) throw error;
        throw fail(`could not be reached: ${(error as Error).message}.`);
      }
      if (!response.ok) {
        const body = await response.text().catch(() => '');
        throw fail(`answered ${response.status}: ${errorMessage(body)}`);
      }
      if (!response.body) throw fail('answered with no body.');
      if (!/text\/event-stream/i.test(response.headers.get('content-type') ?? '')) {
        // An endpoint that ignored `stream: true` answers one JSON completion.
        const body = await response.text();
        let json: Delta;
        try {
          json = JSON.parse(body) as Delta;
        } catch {
          throw fail(`answered something that is neither a stream nor JSON: ${body.slice(0, 200)}`);
        }
        if (json.error) throw fail(`failed: ${errorMessage(body)}`);
        const content = json.choices?.[0]?.message?.content;
        if (typeof content !== 'string') throw fail('answered JSON without choices[0].message.content.');
        yield content;
        return;
      }
      // The events are parsed as the body's bytes arrive, without a stream per stage: every event
      // one read brought is answered before the next read.
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      const events: string[] = [];
      const parser = createParser({ onEvent: (event) => void events.push(event.data) });
      let finished = false;
      try {
        for (let ended = false; !finished; ) {
          if (events.length === 0) {
            if (ended) break;
            waiting?.();
            let next: ReadableStreamReadResult<Uint8Array>;
            try {
              next = await reader.read();
            } catch (error) {
              if (signal.aborted) throw error;
              throw fail(`failed mid-answer: ${(error as Error).message}.`);
            }
            if (next.done) {
              ended = true;
              parser.feed(decoder.decode());
            } else parser.feed(decoder.decode(next.value, { stream: true }));
            continue;
          }
          const data = events.shift()!.trim();
          if (data === '[DONE]') {
            finished = true;
            break;
          }
          let delta: Delta;
          try {
            delta = JSON.parse(data) as Delta;
          } catch {
            throw fail(`sent an event that is not JSON: ${data.slice(0, 200)}`);
          }
          if (delta.error) throw fail(`failed mid-answer: ${errorMessage(data)}`);
          const choice = delta.choices?.[0];
          if (choice?.delta?.content) yield choice.delta.content;
          if (choice?.finish_reason) finished = true;
        }
      } finally {
        reader.cancel().catch(() => {});
      }
      if (!finished) throw fail('closed the stream before the answer was finished.');
    },
  };
}
