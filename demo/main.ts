import { startPiecesService } from '../src/page/index.js';

const status = document.querySelector<HTMLParagraphElement>('#status')!;

startPiecesService().then(
  (service) => {
    status.dataset.state = 'ready';
    status.textContent = `Offline-ready: answering ${service.bases.join(', ')}`;
  },
  (error: Error) => {
    status.dataset.state = 'error';
    status.textContent = `The service could not start: ${error.message}`;
  },
);
