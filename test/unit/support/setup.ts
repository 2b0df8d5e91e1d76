import 'fake-indexeddb/auto';
import { installResponseCheck } from './response-check.js';

// Test what ships: workbox-routing's development logging and asserts are off in the worker build.
process.env.NODE_ENV = 'production';

// Every 2xx body of every unit test must be what the SDK's models allow.
installResponseCheck();
