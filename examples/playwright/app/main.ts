// The app under test: it starts the service, then shows the conversation list.
import { startPiecesService } from 'pieces-os-worker';
import { ConversationList } from '../../conversation-list.js';

await startPiecesService({ quiet: true });
new ConversationList({ element: document.getElementById('conversations')! });
