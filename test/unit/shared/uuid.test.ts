import { afterEach, describe, expect, it, vi } from 'vitest';
import { randomUUID } from '../../../src/shared/uuid.js';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('randomUUID', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('makes version 4 UUIDs where crypto.randomUUID is missing (insecure origins)', () => {
    const real = globalThis.crypto;
    vi.stubGlobal('crypto', { getRandomValues: (array: Uint8Array<ArrayBuffer>) => real.getRandomValues(array) });
    expect(globalThis.crypto.randomUUID).toBeUndefined();
    const ids = new Set(Array.from({ length: 200 }, randomUUID));
    expect(ids.size).toBe(200);
    for (const id of ids) expect(id).toMatch(V4);
  });

  it('uses crypto.randomUUID where it exists', () => {
    expect(randomUUID()).toMatch(V4);
  });
});
