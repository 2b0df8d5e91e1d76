/**
 * A page for the client-flow tests: the service started as an app starts it,
 * and the official SDK 4.1.0 (every API class and model function) on `window.sdk`.
 */
import * as sdk from '@pieces.app/pieces-os-client';
import { addAssets, startPiecesService } from '../../../src/page/index.js';

declare global {
  interface Window {
    sdk: typeof sdk;
    addAssets: typeof addAssets;
  }
}

window.sdk = sdk;
window.addAssets = addAssets;
const status = document.getElementById('status')!;
/** False in a build made with PIECES_FAST_PATH=off (vite.config.ts). */
declare const __PIECES_FAST_PATH__: boolean;
startPiecesService({ quiet: true, fastPath: __PIECES_FAST_PATH__ }).then(
  (service) => {
    status.dataset.fastPath = String(service.fastPath !== null);
    status.dataset.state = 'ready';
    status.textContent = 'ready';
  },
  (error: unknown) => {
    status.dataset.state = 'failed';
    status.textContent = String(error);
  },
);
