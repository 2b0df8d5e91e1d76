import 'fake-indexeddb/auto';
import { installFrameCheck, installResponseCheck } from './response-check.js';

// Test what ships: workbox-routing's development logging and asserts are off in the worker build.
process.env.NODE_ENV = 'production';

// Every 2xx body of every unit test must be what the SDK's models allow.
installResponseCheck();
// And every frame every served socket sends, what the SDK's models allow for that socket.
installFrameCheck();
