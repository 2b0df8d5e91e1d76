// fake-indexeddb ships the types of its `auto` entry outside its package exports.
declare module 'fake-indexeddb/auto';
