/**
 * Testing a component against the Pieces OS API with setupPiecesServer. This
 * file runs three times: in Node, jsdom and happy-dom (vite.config.ts,
 * projects examples-node, examples-jsdom, examples-happy-dom).
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { setupPiecesServer, WebSocket } from 'pieces-os-worker/node';
import { ConversationList } from '../conversation-list.js';

const server = setupPiecesServer({
  data: {
    conversations: [
      {
        id: '0f0e8a52-5b37-4d3a-9c55-1a9a7b9e0001',
        type: 'COPILOT',
        name: 'Refactor the parser',
        created: { value: '2025-01-01T09:00:00Z' },
      },
      {
        id: '0f0e8a52-5b37-4d3a-9c55-1a9a7b9e0002',
        type: 'COPILOT',
        name: 'Write the release notes',
        created: { value: '2025-01-02T09:00:00Z' },
      },
    ],
  },
});

beforeAll(() => server.listen());
afterEach(async () => {
  await server.reset(); // back to the two conversations above
  await server.resetOverrides();
});
afterAll(() => server.close());

/** Mounts the component (rendered where there is a DOM). */
function mount() {
  const element = typeof document === 'undefined' ? undefined : document.body.appendChild(document.createElement('div'));
  const list = new ConversationList({ element, WebSocket });
  return { list, element };
}

it('shows the seeded conversations', async () => {
  const { list, element } = mount();
  expect((await list.until((s) => s.status === 'ready')).names).toEqual(['Refactor the parser', 'Write the release notes']);
  if (element) expect(element.querySelectorAll('li')).toHaveLength(2);
  list.close();
});

it('follows a conversation created elsewhere, live', async () => {
  const { list } = mount();
  await list.until((s) => s.status === 'ready');
  await fetch('http://localhost:1000/conversations/create', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ type: 'COPILOT', name: 'Created by another tab' }),
  });
  expect((await list.until((s) => s.names.length === 3)).names.at(-1)).toBe('Created by another tab');
  list.close();
});

it('shows the error when the snapshot fails with a 500', async () => {
  await server.use({ operation: 'conversationsSnapshot', status: 500, body: 'The database is locked.' });
  const { list, element } = mount();
  expect((await list.until((s) => s.status !== 'loading')).error).toBe('The database is locked.');
  if (element) expect(element.textContent).toBe('Could not load conversations: The database is locked.');
  list.close();
});

it('shows the loading state while the answer is delayed', async () => {
  await server.use({ operation: 'conversationsSnapshot', delay: 200, once: true });
  const { list, element } = mount();
  expect(list.state.status).toBe('loading');
  if (element) expect(element.textContent).toBe('Loading…');
  expect((await list.until((s) => s.status === 'ready')).names).toHaveLength(2);
  list.close();
});

it('starts each test from the same data (reset between tests)', async () => {
  const exported = await server.exportData();
  expect(exported.conversations.map((c) => c.name)).toEqual(['Refactor the parser', 'Write the release notes']);
});

// jsdom and happy-dom (and Node 22+) have a global WebSocket: it is intercepted too.
it.runIf(typeof globalThis.WebSocket === 'function')('works with the global WebSocket where there is one', async () => {
  const list = new ConversationList(); // the component's default: globalThis.WebSocket
  await list.until((s) => s.status === 'ready');
  await fetch('http://localhost:1000/conversations/create', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: '{"type":"COPILOT","name":"Live"}',
  });
  expect((await list.until((s) => s.names.length === 3)).names.at(-1)).toBe('Live');
  list.close();
});
