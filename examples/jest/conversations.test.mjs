// setupPiecesServer under Jest (node environment, native ESM: node --experimental-vm-modules).
import { afterAll, afterEach, beforeAll, expect, test } from '@jest/globals';
import { setupPiecesServer, WebSocket } from 'pieces-os-worker/node';

const server = setupPiecesServer({
  data: { conversations: [{ id: '0f0e8a52-5b37-4d3a-9c55-1a9a7b9e0001', type: 'COPILOT', name: 'Refactor the parser' }] },
});
beforeAll(() => server.listen());
afterEach(async () => {
  await server.reset();
  await server.resetOverrides();
});
afterAll(() => server.close());

const names = async () =>
  (await (await fetch('http://localhost:1000/conversations?transferables=false')).json()).iterable.map((c) => c.name);

test('reads the seeded conversations', async () => {
  expect(await names()).toEqual(['Refactor the parser']);
});

test('streams a new conversation, live', async () => {
  const socket = new WebSocket('ws://localhost:1000/conversations/stream/identifiers');
  const messages = [];
  const second = new Promise((resolve) => {
    socket.onmessage = (event) => {
      messages.push(JSON.parse(event.data));
      if (messages.length === 2) resolve();
    };
  });
  await new Promise((resolve) => (socket.onopen = resolve));
  const created = await (
    await fetch('http://localhost:1000/conversations/create', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"type":"COPILOT"}',
    })
  ).json();
  await second;
  expect(messages[1]).toEqual({ iterable: [{ conversation: { id: created.id } }] });
  socket.close();
});

test('answers a forced 500, then the real list', async () => {
  await server.use({ operation: 'conversationsSnapshot', status: 500, body: 'The database is locked.', once: true });
  const failed = await fetch('http://localhost:1000/conversations');
  expect([failed.status, await failed.text()]).toEqual([500, 'The database is locked.']);
  expect(await names()).toEqual(['Refactor the parser']);
});

test('starts each test from the same data', async () => {
  expect((await server.exportData()).conversations.map((c) => c.name)).toEqual(['Refactor the parser']);
});
