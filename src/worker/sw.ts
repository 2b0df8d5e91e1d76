/**
 * The standalone worker script (built to `pieces-os-worker.js`). Its options
 * come from the script URL, which `startPiecesService()` sets:
 * `pieces-os-worker.js?bases=<comma-separated URLs>&log=1&sampleAssets=0&mirror=<Pieces OS URL, or auto>&mirrorRetryMax=<ms>` (and
 * `groupCommit=0`, for comparisons).
 */
import { startWorker } from './start.js';
import type { ServiceWorkerScope } from './sw-types.js';

const scope = self as unknown as ServiceWorkerScope;
const params = new URL(scope.location.href).searchParams;
const bases = params.get('bases');
const mirror = params.get('mirror');
const retryMax = params.get('mirrorRetryMax');
startWorker(scope, {
  ...(bases ? { bases: bases.split(',').filter(Boolean) } : {}),
  ...(mirror ? { mirror: { upstream: mirror, ...(retryMax ? { retryMaxMs: Number(retryMax) } : {}) } } : {}),
  ...(params.get('log') === '1' ? { log: true } : {}),
  ...(params.get('sampleAssets') === '0' ? { sampleAssets: false } : {}),
  ...(params.get('groupCommit') === '0' ? { groupCommit: false } : {}),
});
