import { describe, expect, it } from 'vitest';
import { bestPassage, RelevanceIndex, tokenize } from '../../../src/core/relevance.js';

const doc = (id: string, fields: Record<string, string>, kind = 'asset') => ({ id, kind, fields });

describe('tokenize', () => {
  it('splits identifiers, drops stop words and folds plurals', () => {
    expect(tokenize('How do I debounceTimer the retries of fetch_json?')).toEqual([
      'debouncetimer',
      'debounce',
      'timer',
      'retry',
      'fetchjson',
      'fetch',
      'json',
    ]);
    expect(tokenize('HTTPServer parseURLs')).toEqual(['httpserver', 'http', 'server', 'parseurl', 'parse', 'url']);
  });
});

describe('RelevanceIndex', () => {
  it('ranks by BM25: rarer terms and more occurrences score higher, best first', () => {
    const index = new RelevanceIndex();
    index.set(doc('a', { text: 'retry retry retry with backoff' }));
    index.set(doc('b', { text: 'retry once' }));
    index.set(doc('c', { text: 'debounce a function' }));
    const hits = index.search('retry');
    expect(hits.map((h) => h.id)).toEqual(['a', 'b']);
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
    expect(hits[1]!.score).toBeGreaterThan(0);
    // A term found in every document is worth less than one found in a single document.
    index.set(doc('d', { text: 'backoff retry' }));
    const [backoff] = index.search('backoff').filter((h) => h.id === 'd');
    const [retry] = index.search('retry').filter((h) => h.id === 'd');
    expect(backoff!.score).toBeGreaterThan(retry!.score);
  });

  it('weights the name above the text and finds a language by its name', () => {
    const index = new RelevanceIndex();
    index.set(doc('body', { name: 'notes.md', text: 'a debounce helper is described here', language: 'md' }));
    index.set(doc('name', { name: 'debounce.ts', text: 'export function wait() {}', language: 'ts' }));
    index.set(doc('py', { name: 'retry.py', text: 'import time', language: 'py' }));
    expect(index.search('debounce').map((h) => h.id)).toEqual(['name', 'body']);
    expect(index.search('python').map((h) => h.id)).toEqual(['py']);
    expect(index.search('typescript').map((h) => h.id)).toEqual(['name']);
  });

  it('is deterministic: equal scores are ordered by id, whatever the insertion order', () => {
    const ids = ['c', 'a', 'b'];
    const forward = new RelevanceIndex();
    const backward = new RelevanceIndex();
    for (const id of ids) forward.set(doc(id, { text: 'same words here' }));
    for (const id of [...ids].reverse()) backward.set(doc(id, { text: 'same words here' }));
    expect(forward.search('words').map((h) => h.id)).toEqual(['a', 'b', 'c']);
    expect(backward.search('words')).toEqual(forward.search('words'));
  });

  it('replaces and deletes documents, keeping statistics exact', () => {
    const fresh = new RelevanceIndex();
    fresh.set(doc('x', { text: 'alpha beta' }));
    fresh.set(doc('y', { text: 'gamma' }));

    const edited = new RelevanceIndex();
    edited.set(doc('x', { text: 'alpha' }));
    edited.set(doc('z', { text: 'alpha alpha alpha delta' }));
    edited.set(doc('y', { text: 'gamma' }));
    edited.set(doc('x', { text: 'alpha beta' }));
    expect(edited.delete('z')).toBe(true);
    expect(edited.delete('z')).toBe(false);
    expect(edited.size).toBe(2);
    // After edits the index scores exactly as one built from scratch.
    expect(edited.search('alpha gamma delta')).toEqual(fresh.search('alpha gamma delta'));
    expect(edited.search('delta')).toEqual([]);
  });

  it('filters by kind and id, limits, and finds nothing for stop words only', () => {
    const index = new RelevanceIndex();
    index.set(doc('m1', { text: 'debounce in a message' }, 'message'));
    index.set(doc('a1', { text: 'debounce in an asset' }, 'asset'));
    index.set(doc('a2', { text: 'debounce debounce' }, 'asset'));
    expect(index.search('debounce', { kinds: ['message'] }).map((h) => h.id)).toEqual(['m1']);
    expect(
      index
        .search('debounce', { ids: new Set(['a1', 'm1']) })
        .map((h) => h.id)
        .sort(),
    ).toEqual(['a1', 'm1']);
    expect(index.search('debounce', { limit: 1 })).toHaveLength(1);
    expect(index.search('how is the')).toEqual([]);
    expect(new RelevanceIndex().search('anything')).toEqual([]);
  });
});

describe('bestPassage', () => {
  it('returns the window of lines with the most query terms, with offsets', () => {
    const lines = Array.from({ length: 40 }, (_, i) => (i === 25 ? 'const backoff = retry(delay);' : `line ${i}`));
    const text = lines.join('\n');
    const passage = bestPassage(text, 'retry with backoff', 5);
    expect(passage.text).toContain('retry(delay)');
    expect(text.slice(passage.start, passage.end)).toBe(passage.text);
    expect(passage.text.split('\n')).toHaveLength(5);
    expect(bestPassage('short text', 'x')).toEqual({ text: 'short text', start: 0, end: 10 });
  });
});
