/**
 * The standalone worker script (built to `pieces-os-worker.js`). Its bases
 * come from the script URL: `pieces-os-worker.js?bases=<comma-separated URLs>`,
 * which `startPiecesService({ bases })` sets.
 */
import { startWorker } from './host.js';
import type { ServiceWorkerScope } from './sw-types.js';

const scope = self as unknown as ServiceWorkerScope;
const bases = new URL(scope.location.href).searchParams.get('bases');
startWorker(scope, bases ? { bases: bases.split(',').filter(Boolean) } : {});
