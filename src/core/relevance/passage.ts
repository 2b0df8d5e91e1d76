import { tokenize } from './tokenize.js';

/**
 * The passage of `text` that best matches the query: the window of up to
 * `lines` lines holding the most query terms (the earliest on a tie), with
 * its character offsets. The whole text when it is that short.
 */
export function bestPassage(text: string, query: string, lines = 12): { text: string; start: number; end: number } {
  const all = text.split('\n');
  if (all.length <= lines) return { text, start: 0, end: text.length };
  const wanted = new Set(tokenize(query));
  const hits = all.map((line) => tokenize(line).filter((term) => wanted.has(term)).length);
  let best = 0;
  let bestHits = -1;
  let window = 0;
  for (let i = 0; i < all.length; i++) {
    window += hits[i]!;
    if (i >= lines) window -= hits[i - lines]!;
    const first = Math.max(0, i - lines + 1);
    if (i >= lines - 1 && window > bestHits) {
      bestHits = window;
      best = first;
    }
  }
  const offsets: number[] = [];
  let offset = 0;
  for (const line of all) {
    offsets.push(offset);
    offset += line.length + 1;
  }
  const start = offsets[best]!;
  const lastLine = best + lines - 1;
  const end = offsets[lastLine]! + all[lastLine]!.length;
  return { text: text.slice(start, end), start, end };
}
