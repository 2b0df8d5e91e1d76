/** RelevanceIndex.save and load: a loaded index ranks as the one saved, before and after it is written. */
import { describe, expect, it } from 'vitest';
import { RelevanceIndex } from '../../../src/core/relevance.js';

const WORDS = 'retry backoff debounce cache parse fetch stream socket timeout queue worker lock channel handler router token'.split(' ');

function documents(count: number, seed: number) {
  let state = seed;
  const random = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const word = () => WORDS[Math.floor(random() * WORDS.length)]!;
  return Array.from({ length: count }, (_, i) => ({
    id: `doc-${String(i).padStart(4, '0')}`,
    kind: 'asset',
    fields: {
      name: `${word()}_${word()}.ts`,
      language: 'ts',
      description: `${word()} ${word()}`,
      text: Array.from({ length: 20 }, word).join(' '),
    },
  }));
}

const QUERIES = ['retry backoff', 'cache', 'socket timeout handler', 'nothing', 'parse token router'];
const ranks = (index: RelevanceIndex) => QUERIES.map((q) => index.search(q));

describe('RelevanceIndex.save and load', () => {
  it('loads an index that ranks exactly as the saved one, and stays so through sets and deletes', () => {
    const original = new RelevanceIndex();
    const docs = documents(300, 3);
    for (const doc of docs) original.set(doc);
    original.delete('doc-0007');
    const loaded = RelevanceIndex.load(structuredClone(original.save()));
    expect(loaded.size).toBe(original.size);
    expect(ranks(loaded)).toEqual(ranks(original));
    // The same writes on both: a new document, a replaced one, a removed one.
    for (const index of [original, loaded]) {
      index.set({ id: 'doc-new', kind: 'asset', fields: { name: 'retry_now.ts', text: 'retry retry backoff' } });
      index.set({ ...docs[10]!, fields: { ...docs[10]!.fields, text: 'socket socket socket' } });
      index.delete('doc-0020');
    }
    expect(ranks(loaded)).toEqual(ranks(original));
    expect(loaded.has('doc-0020')).toBe(false);
    // Saved again, the two are the same data (documents in slot order aside).
    const a = original.save();
    const b = loaded.save();
    const postingsOf = (state: typeof a) =>
      Object.fromEntries(
        state.terms.map((term, t) => {
          const before = [...state.counts.subarray(0, t)].reduce((x, y) => x + y, 0);
          const pairs = [...state.postings.subarray(2 * before, 2 * (before + state.counts[t]!))];
          const perDoc: string[] = [];
          for (let i = 0; i < pairs.length; i += 2) perDoc.push(`${state.ids[pairs[i]!]}:${pairs[i + 1]}`);
          return [term, perDoc.sort()];
        }),
      );
    expect(postingsOf(b)).toEqual(postingsOf(a));
  });

  it('loads an empty index', () => {
    const loaded = RelevanceIndex.load(new RelevanceIndex().save());
    expect(loaded.size).toBe(0);
    expect(loaded.search('anything')).toEqual([]);
  });

  it('ranks a loaded index whose loaded documents were removed and set again exactly as one built afresh', () => {
    const docs = documents(200, 5);
    const original = new RelevanceIndex();
    for (const doc of docs) original.set(doc);
    const loaded = RelevanceIndex.load(structuredClone(original.save()));
    // Remove a fifth of the loaded documents, replace another fifth, add some.
    const fresh = new RelevanceIndex();
    const now = new Map(docs.map((doc) => [doc.id, doc]));
    docs.forEach((doc, i) => {
      if (i % 5 === 0) {
        loaded.delete(doc.id);
        now.delete(doc.id);
      } else if (i % 5 === 1) {
        const replaced = { ...doc, fields: { ...doc.fields, text: `${doc.fields.text} retry retry` } };
        loaded.set(replaced);
        now.set(doc.id, replaced);
      }
    });
    const added = documents(20, 9).map((doc) => ({ ...doc, id: `new-${doc.id}` }));
    for (const doc of added) {
      loaded.set(doc);
      now.set(doc.id, doc);
    }
    for (const doc of now.values()) fresh.set(doc);
    expect(loaded.size).toBe(fresh.size);
    expect(ranks(loaded)).toEqual(ranks(fresh));
    // Saved and loaded again: still the same.
    expect(ranks(RelevanceIndex.load(loaded.save()))).toEqual(ranks(fresh));
  });

  it('refuses a state that does not hold together', () => {
    const index = new RelevanceIndex();
    for (const doc of documents(30, 4)) index.set(doc);
    const state = index.save();
    const damaged = [
      { ...state, postings: state.postings.subarray(0, state.postings.length - 2) },
      { ...state, terms: [...state.terms].reverse() },
      { ...state, terms: state.terms.map((t, i) => (i === 1 ? state.terms[0]! : t)) },
      { ...state, lengths: state.lengths.subarray(4) },
      { ...state, kinds: state.kinds.slice(1) },
      { ...state, counts: state.counts.map((x, i) => (i === 0 ? x + 1 : x)) },
    ];
    for (const bad of damaged) expect(() => RelevanceIndex.load(bad)).toThrow(/kept index/);
    expect(() => RelevanceIndex.load(state)).not.toThrow();
  });

  it('keeps with a limit exactly the first hits of the whole ranking (ties by id), loaded or not', () => {
    const index = new RelevanceIndex();
    // Many equal scores: the same few words in documents of the same length.
    for (const doc of documents(150, 8)) index.set({ ...doc, fields: { text: doc.fields.description } });
    index.set({ id: 'doc-zz', kind: 'asset', fields: { text: 'retry backoff' } });
    const loaded = RelevanceIndex.load(structuredClone(index.save()));
    for (const each of [index, loaded]) {
      for (const query of QUERIES) {
        const all = each.search(query);
        for (const limit of [0, 1, 3, 10, all.length + 1]) expect(each.search(query, { limit })).toEqual(all.slice(0, limit));
      }
    }
  });
});
