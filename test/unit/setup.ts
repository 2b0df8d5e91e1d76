import 'fake-indexeddb/auto';

// Test what ships: workbox-routing's development logging and asserts are off in the worker build.
process.env.NODE_ENV = 'production';
