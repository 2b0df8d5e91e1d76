/**
 * The storage one write is answered with while the upstream cannot take it: the same
 * storage, whose first write of records appends the operation to the outbox in its own
 * transaction (queued if and only if the write commits), with the ids of the records it
 * creates, in the order the route table's `creates` reads them from an upstream's answer.
 */
import type { CreatedId } from '../../storage/schema.js';
import type { ConversationEdit, ConversationState, OutboxInput, Storage } from '../../storage/storage.js';

type Args = unknown[];

/** Each write of records: where its `outbox` argument goes, and the records it creates (the edit's, once it has run). */
const WRITES: Record<string, { at: number; created(args: Args, input: OutboxInput): CreatedId[] }> = {
  createConversation: {
    at: 3,
    created: ([conversation, messages]) => [
      { kind: 'conversation', id: (conversation as { id: string }).id },
      ...(messages as Array<{ id: string }>).map((m): CreatedId => ({ kind: 'conversationMessage', id: m.id })),
    ],
  },
  putApplication: { at: 1, created: ([application]) => [{ kind: 'application', id: (application as { id: string }).id }] },
  putSession: { at: 1, created: ([session]) => [{ kind: 'session', id: (session as { id: string }).id }] },
  putAssets: { at: 2, created: ([assets]) => (assets as Array<{ record: { id: string } }>).map((a): CreatedId => ({ kind: 'asset', id: a.record.id })) },
  recordEvent: { at: 2, created: () => [] },
  closeSession: { at: 2, created: () => [] },
  deleteConversation: { at: 1, created: () => [] },
  editConversation: {
    at: 2,
    created(args, input) {
      // The messages an edit adds are known once it has run, inside the transaction (before the entry is written).
      const edit = args[1] as (current: ConversationState) => ConversationEdit;
      args[1] = (current: ConversationState) => {
        const result = edit(current);
        const known = new Set(current.messages.map((m) => m.id));
        input.created = (result.putMessages ?? []).filter((m) => !known.has(m.id)).map((m): CreatedId => ({ kind: 'conversationMessage', id: m.id }));
        return result;
      };
      return [];
    },
  },
};

export interface Queueing {
  storage: Storage;
  /** Whether the operation was queued (its write was made). */
  queued(): boolean;
}

/** `storage`, whose first write of records queues `input` with it (later writes of the same request do not queue it again). */
export function queueingStorage(storage: Storage, input: OutboxInput): Queueing {
  let used = false;
  let written = false;
  const wrapped = new Proxy(storage, {
    get(target, key: string) {
      const value = (target as unknown as Record<string, unknown>)[key];
      const write = WRITES[key];
      if (!write || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
      return async (...args: Args) => {
        if (used) return value.apply(target, args);
        used = true;
        input.created = write.created(args, input);
        while (args.length < write.at) args.push(undefined);
        args[write.at] = input;
        const result = await value.apply(target, args);
        // A write that found nothing to change (an unknown id) wrote nothing, and queued nothing.
        written = result !== undefined || key === 'putSession';
        return result;
      };
    },
  });
  return { storage: wrapped, queued: () => written };
}
