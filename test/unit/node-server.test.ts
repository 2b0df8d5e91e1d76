import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupPiecesServer } from '../../src/node/index.js';

describe('smoke', () => {
  const server = setupPiecesServer();
  beforeAll(() => server.listen());
  afterAll(() => server.close());
  it('fetch', async () => {
    const r = await fetch('http://localhost:1000/conversations/identifiers');
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ iterable: [] });
  });
  it('ws', async () => {
    const socket = new WebSocket('ws://localhost:1000/conversations/stream/identifiers');
    const first = await new Promise((resolve, reject) => { socket.onmessage = (e) => resolve(JSON.parse(e.data)); socket.onerror = reject; });
    expect(first).toEqual({ iterable: [] });
    const created = await (await fetch('http://localhost:1000/conversations/create', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"type":"COPILOT"}' })).json();
    const next = await new Promise((resolve) => { socket.onmessage = (e) => resolve(JSON.parse(e.data)); });
    expect(next).toEqual({ iterable: [{ conversation: { id: created.id } }] });
    socket.close();
  });
  it('xhr', async () => {
    const xhr = new XMLHttpRequest();
    xhr.open('GET', 'http://localhost:1000/applications');
    const body = await new Promise((resolve) => { xhr.onload = () => resolve(xhr.responseText); xhr.send(); });
    expect(body).toBe('{"iterable":[]}');
  });
});
