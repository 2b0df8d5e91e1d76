/** This project, as an app uses it. */
import { startPiecesService } from '../../../src/page/index.js';
import { ready } from './bodies.js';

await startPiecesService({ quiet: true });
ready();
