/**
 * This project, as an app uses it. `?fastPath=0`: every request through the
 * worker's fetch handler; `?groupCommit=0` (the page served under /off/): a second
 * registration of the worker, for /off/, that writes each create alone, on the same database.
 * `?mirror=<Pieces OS URL>`: the service mirrors it (test/bench/mirror.bench.ts).
 */
import { addAssets, connectMirror, mirrorStatus, setModel, startPiecesService } from '../../../src/page/index.js';
import { ready } from './bodies.js';

const params = new URL(location.href).searchParams;
const service = await startPiecesService({
  quiet: true,
  fastPath: params.get('fastPath') !== '0',
  ...(params.get('groupCommit') === '0' ? { url: '/pieces-os-worker.js?groupCommit=0', scope: '/off/' } : {}),
  ...(params.get('mirror') ? { mirror: { upstream: params.get('mirror')! } } : {}),
});
// For the copilot, mirror and growth benchmarks (`seed`: the bulk path).
Object.assign(window, { pieces: { addAssets, setModel, mirrorStatus, connectMirror, seed: service.seed } });
ready();
