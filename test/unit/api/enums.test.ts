/** The enumerations kept in src/core/enums.ts are the SDK's, value for value. */
import * as sdk from '@pieces.app/pieces-os-client';
import { describe, expect, it } from 'vitest';
import * as enums from '../../../src/core/enums.js';

/** Where the names here are shorter than the SDK's. */
const SDK_NAME: Record<string, string> = {
  MessageRoleEnum: 'QGPTConversationMessageRoleEnum',
  MessageSentimentEnum: 'ConversationMessageSentimentEnum',
  RoleEnum: 'Role',
};

describe('enums', () => {
  it.each(Object.entries(enums).filter(([name]) => name.endsWith('Enum')))('%s is the SDK 4.1.0 enumeration', (name, values) => {
    const theirs = (sdk as unknown as Record<string, Record<string, string>>)[SDK_NAME[name] ?? name];
    expect(theirs, `the SDK has no ${name}`).toBeDefined();
    expect([...(values as readonly string[])].sort()).toEqual(Object.values(theirs!).sort());
  });
});
