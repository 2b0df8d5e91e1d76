/** This project, as an app uses it. */
import { addAssets, setModel, startPiecesService } from '../../../src/page/index.js';
import { ready } from './bodies.js';

await startPiecesService({ quiet: true });
// For the copilot benchmark.
Object.assign(window, { pieces: { addAssets, setModel } });
ready();
