/**
 * The page API's `sampleAssets` option in worker mode: passed to the worker script in its URL
 * (test/browser/sample-assets.test.ts opens the demo with it, in worker and page mode).
 */
import { describe, expect, it } from 'vitest';
import { workerURL } from '../../../src/page/worker-mode.js';

describe('startPiecesService({ sampleAssets: false })', () => {
  it('worker mode: the worker script is told, and no other setting changes its URL', () => {
    expect(workerURL({ sampleAssets: false }).searchParams.get('sampleAssets')).toBe('0');
    for (const sampleAssets of [true, undefined]) expect(workerURL({ sampleAssets }).searchParams.has('sampleAssets')).toBe(false);
    expect(workerURL({ url: '/sw.js?v=2', sampleAssets: false }).search).toBe('?v=2&sampleAssets=0');
  });
});
