/**
 * The text of a workstream summary made from events: deterministic without a model (summaryText:
 * the span, the applications and windows, one line an event); with a model configured (the
 * copilot's default adapter), its SUMMARY is what the model writes from the events (each as a
 * passage: when, where, what it showed), the name and DESCRIPTION staying the deterministic ones.
 */
import type { ServiceContext } from '../context.js';
import { extractiveModel, type RelevantMaterial } from '../copilot/model.js';
import { createdOf, seenIn, summaryText, type TimeRange } from '../models/pattern-engine.js';
import type { JsonObject } from '../validate.js';

/** Most events given to a model as passages (the newest, when there are more). */
const PROMPT_EVENTS = 200;

/** An event as a passage for the model: named by its time, application and window; its text what it showed. */
function eventPassage(event: JsonObject): RelevantMaterial {
  const seen = seenIn(event);
  const where = [seen.application, seen.window, seen.url].filter(Boolean).join(' — ');
  return {
    ...(typeof event.id === 'string' ? { id: event.id } : {}),
    name: `${createdOf(event) ?? ''} ${where}`.trim(),
    text: seen.text ?? where,
  };
}

/** A summary's name, SUMMARY and DESCRIPTION from its events (see above); a failing model throws its ModelError. */
export async function writeSummary(service: ServiceContext, events: ReadonlyArray<JsonObject>, span?: TimeRange) {
  const text = summaryText(events, span);
  const adapter = await service.copilot.model();
  if (adapter === extractiveModel || events.length === 0) return text;
  const sorted = [...events].sort((a, b) => String(createdOf(a)).localeCompare(String(createdOf(b))));
  const relevant = sorted.slice(-PROMPT_EVENTS).map(eventPassage);
  const query =
    `Summarize my workstream in a few Markdown paragraphs and bullet points: what I worked on, in which applications and windows, ` +
    `and what is left to do. The passages are its events, oldest first (${text.description})`;
  let written = '';
  const signal = new AbortController().signal;
  for await (const chunk of adapter.answer({ query, relevant, messages: [], signal })) written += chunk;
  return { ...text, summary: written.trim() || text.summary };
}
