import { describe, expect, it } from 'vitest';
import { rewriteIds, rewriteIdsInJson } from '../../../src/shared/rewrite-ids.js';

const local = '11111111-1111-4111-8111-111111111111';
const other = '22222222-2222-4222-8222-222222222222';
const theirs = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const map = new Map([[local, theirs]]);

describe('rewriteIds', () => {
  it('replaces every string and key equal to a mapped id, at any depth, and nothing else', () => {
    const value = {
      id: local,
      formats: { iterable: [{ id: local, asset: { id: other } }], indices: { [local]: 0, [other]: 1 } },
      names: [local, `${local} `, `see ${local}`, other],
      count: 3,
      none: null,
    };
    expect(rewriteIds(value, map)).toEqual({
      id: theirs,
      formats: { iterable: [{ id: theirs, asset: { id: other } }], indices: { [theirs]: 0, [other]: 1 } },
      names: [theirs, `${local} `, `see ${local}`, other],
      count: 3,
      none: null,
    });
    expect(value.id).toBe(local);
  });

  it('gives back the same objects where nothing is rewritten', () => {
    const untouched = { a: [other, { b: other }] };
    const value = { untouched, changed: { id: local } };
    const rewritten = rewriteIds(value, map);
    expect(rewritten).not.toBe(value);
    expect(rewritten.untouched).toBe(untouched);
    expect(rewriteIds(untouched, map)).toBe(untouched);
    expect(rewriteIds(value, new Map())).toBe(value);
  });

  it('rewrites JSON text, and gives back the same text when it names no mapped id', () => {
    const text = JSON.stringify({ id: local, path: `C:\\"${local}"`, list: { indices: { [local]: 0 } } });
    expect(JSON.parse(rewriteIdsInJson(text, map))).toEqual({ id: theirs, path: `C:\\"${local}"`, list: { indices: { [theirs]: 0 } } });
    const plain = JSON.stringify({ id: other });
    expect(rewriteIdsInJson(plain, map)).toBe(plain);
  });
});
