/**
 * Full-text search over conversations (searchConversations): BM25 over each
 * conversation's name (counted twice) and its messages' text, best first.
 * `exact` says the whole query occurs as written (case-insensitively);
 * `similarity` is the score relative to the best match (0–1].
 */
import type { ConversationList } from '../../storage/storage.js';
import { badRequest } from '../http.js';
import { array, object, optional, string, type JsonObject } from '../validate.js';
import { conversationJson, messageText } from './conversation.js';

const K1 = 1.2;
const B = 0.75;

const terms = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];

/** The query of a SearchInput: the `query` of its engines (and their nested operations), or a top-level `query`. */
export function searchQuery(body: unknown): string {
  const input = object(body, 'searchInput');
  const found: string[] = [];
  const top = optional(input, 'query', 'searchInput', string);
  if (top) found.push(top);
  const walk = (engines: JsonObject, path: string) => {
    optional(engines, 'iterable', path, array)?.forEach((item, i) => {
      const engine = object(item, `${path}.iterable[${i}]`);
      const query = optional(engine, 'query', `${path}.iterable[${i}]`, string);
      if (query) found.push(query);
      const nested = optional(engine, 'operations', `${path}.iterable[${i}]`, object);
      if (nested) walk(nested, `${path}.iterable[${i}].operations`);
    });
  };
  const engines = optional(input, 'engines', 'searchInput', object);
  if (engines) walk(engines, 'searchInput.engines');
  const query = found.join(' ').trim();
  if (!query) throw badRequest('searchInput.engines.iterable[].query is required: the text to search for.');
  return query;
}

export function searchConversations(body: unknown, list: ConversationList, transferables: boolean): string {
  const query = searchQuery(body);
  const phrase = query.toLowerCase();
  const wanted = [...new Set(terms(query))];
  const docs = list.conversations.map((record) => {
    const name = (JSON.parse(record.json) as { name?: string }).name ?? '';
    const texts = record.messageIds.map((id) => ({ id, text: list.messages?.get(id) ? messageText(list.messages.get(id)!) : '' }));
    const words = [...terms(name), ...terms(name), ...texts.flatMap((t) => terms(t.text))];
    const counts = new Map<string, number>();
    for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
    const exact = name.toLowerCase().includes(phrase) || texts.some((t) => t.text.toLowerCase().includes(phrase));
    return { record, texts, counts, length: words.length, exact };
  });
  const average = docs.reduce((sum, d) => sum + d.length, 0) / Math.max(docs.length, 1) || 1;
  const idf = new Map(
    wanted.map((term) => {
      const df = docs.filter((d) => d.counts.has(term)).length;
      return [term, Math.log(1 + (docs.length - df + 0.5) / (df + 0.5))];
    }),
  );
  const scored = docs
    .map((doc) => {
      let score = 0;
      for (const term of wanted) {
        const tf = doc.counts.get(term) ?? 0;
        if (tf) score += idf.get(term)! * ((tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * doc.length) / average)));
      }
      return { ...doc, score };
    })
    .filter((doc) => doc.score > 0 || doc.exact)
    .sort((a, b) => Number(b.exact) - Number(a.exact) || b.score - a.score || a.record.seq - b.record.seq);
  const best = Math.max(...scored.map((d) => d.score), 0);
  const items = scored.map((doc) => {
    const similarity = best > 0 ? doc.score / best : 1;
    const messages = doc.texts
      .map(({ id, text }) => {
        const lower = text.toLowerCase();
        const found = wanted.filter((term) => terms(lower).includes(term)).length;
        return { id, exact: lower.includes(phrase), similarity: wanted.length ? found / wanted.length : 0 };
      })
      .filter((m) => m.exact || m.similarity > 0)
      .sort((a, b) => Number(b.exact) - Number(a.exact) || b.similarity - a.similarity)
      .map(
        (m) =>
          `{${transferables ? `"message":${list.messages!.get(m.id)!.json},` : ''}"exact":${m.exact},"similarity":${m.similarity},"identifier":"${m.id}"}`,
      );
    const conversation = conversationJson(doc.record, transferables ? list.messages : undefined);
    return `{"conversation":${conversation},"messages":{"iterable":[${messages.join(',')}]},"exact":${doc.exact},"similarity":${similarity},"identifier":"${doc.record.id}"}`;
  });
  return `{"iterable":[${items.join(',')}]}`;
}
