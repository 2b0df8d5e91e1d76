/**
 * This project, as an app uses it. `?fastPath=0`: every request through the
 * worker's fetch handler; `?groupCommit=0`: a worker that writes each create alone.
 */
import { addAssets, setModel, startPiecesService } from '../../../src/page/index.js';
import { ready } from './bodies.js';

const params = new URL(location.href).searchParams;
await startPiecesService({
  quiet: true,
  fastPath: params.get('fastPath') !== '0',
  ...(params.get('groupCommit') === '0' ? { url: '/pieces-os-worker.js?groupCommit=0' } : {}),
});
// For the copilot benchmark.
Object.assign(window, { pieces: { addAssets, setModel } });
ready();
