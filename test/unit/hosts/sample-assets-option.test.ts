/**
 * The page API's `sampleAssets` option in worker mode: passed to the worker script in its URL
 * (test/browser/sample-assets.test.ts opens the demo with it, in worker and page mode); the
 * mirror's `retryMaxMs` likewise; a `helloTimeoutMs` that is no wait is refused.
 */
import { describe, expect, it } from 'vitest';
import { startWorkerMode, workerURL } from '../../../src/page/worker-mode.js';

describe('startPiecesService({ sampleAssets: false })', () => {
  it('worker mode: the worker script is told, and no other setting changes its URL', () => {
    expect(workerURL({ sampleAssets: false }).searchParams.get('sampleAssets')).toBe('0');
    for (const sampleAssets of [true, undefined]) expect(workerURL({ sampleAssets }).searchParams.has('sampleAssets')).toBe(false);
    expect(workerURL({ url: '/sw.js?v=2', sampleAssets: false }).search).toBe('?v=2&sampleAssets=0');
  });
});

describe('startPiecesService({ mirror: { upstream, retryMaxMs } })', () => {
  it('worker mode: the worker script is told retryMaxMs beside the upstream', () => {
    const url = workerURL({ mirror: { upstream: 'http://localhost:39300', retryMaxMs: 2000 } });
    expect([url.searchParams.get('mirror'), url.searchParams.get('mirrorRetryMax')]).toEqual(['http://localhost:39300', '2000']);
    expect(workerURL({ mirror: { upstream: 'auto' } }).searchParams.has('mirrorRetryMax')).toBe(false);
  });
});

describe('startPiecesService({ helloTimeoutMs })', () => {
  it('refuses a wait that is not a number of milliseconds above 0, before anything is registered', async () => {
    for (const helloTimeoutMs of [0, -1, Number.NaN]) {
      await expect(startWorkerMode({ helloTimeoutMs })).rejects.toThrow(
        `helloTimeoutMs must be a number of milliseconds above 0, not ${JSON.stringify(helloTimeoutMs)}.`,
      );
    }
  });
});
