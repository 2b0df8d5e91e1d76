import { describe, expect, it } from 'vitest';
import { ConversationFromJSON, instanceOfConversation } from '@pieces.app/pieces-os-client';
import { BASE, setup } from './harness.js';

describe('core', () => {
  it('creates a conversation with a seeded message and lists it', async () => {
    const t = await setup();
    const created = await t.conversations.conversationsCreateSpecificConversation({
      seededConversation: { type: 'COPILOT', name: 'hi', messages: [{ role: 'USER', fragment: { string: { raw: 'hello' } } }] } as never,
    });
    expect(created.name).toBe('hi');
    const raw = await (await t.fetch(`${BASE}/conversations`)).json();
    const listed = ConversationFromJSON(raw.iterable[0]);
    expect(instanceOfConversation(listed)).toBe(true);
    expect(listed.messages.iterable[0]?.reference?.fragment?.string?.raw).toBe('hello');
  });
});
