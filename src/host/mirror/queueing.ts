/**
 * The storage one write is answered with while the upstream cannot take it: the same
 * storage, whose first write of records appends the operation to the outbox in its own
 * transaction (queued if and only if the write commits), with the ids of the records it
 * creates, in the order the route table's `creates` reads them from an upstream's answer.
 */
import type { AnchorRecord, CreatedId } from '../../storage/schema.js';
import type { AnchorEdit, AssetEdit, ConversationEdit, ConversationState, NewAsset, OutboxInput, Storage, StoredAsset } from '../../storage/storage.js';
import { specOf } from './outbox-plan.js';

type Args = unknown[];

/**
 * Each write of records: where its `outbox` argument goes, the records it creates (for an edit,
 * known once it has run, inside the transaction, before the entry is written: the wrapped edit
 * fills `input.created`), and whether it wrote anything (a write that found nothing to change
 * queues nothing).
 */
interface Write {
  at: number;
  created(args: Args, input: OutboxInput): CreatedId[];
  wrote?(result: unknown): boolean;
}

/** Wraps the edit at `args[at]` so that what it creates is read from its result, as it runs. */
function fromEdit<C, R>(args: Args, at: number, input: OutboxInput, made: (current: C, result: R) => CreatedId[]): CreatedId[] {
  const edit = args[at] as (current: C, ...rest: unknown[]) => R;
  args[at] = (current: C, ...rest: unknown[]) => {
    const result = edit(current, ...rest);
    if (specOf(input).creates) input.created = made(current, result);
    return result;
  };
  return [];
}

const WRITES: Record<string, Write> = {
  createConversation: {
    at: 4,
    created: ([conversation, messages]) => [
      { kind: 'conversation', id: (conversation as { id: string }).id },
      ...(messages as Array<{ id: string }>).map((m): CreatedId => ({ kind: 'conversationMessage', id: m.id })),
    ],
  },
  putApplication: { at: 1, created: ([application]) => [{ kind: 'application', id: (application as { id: string }).id }] },
  putSession: { at: 1, created: ([session]) => [{ kind: 'session', id: (session as { id: string }).id }], wrote: () => true },
  putAssets: { at: 2, created: ([assets]) => (assets as NewAsset[]).flatMap(assetCreated) },
  recordEvent: { at: 2, created: () => [] },
  closeSession: { at: 2, created: () => [] },
  deleteConversation: { at: 1, created: () => [] },
  editConversation: {
    at: 2,
    created: (args, input) =>
      fromEdit<ConversationState, ConversationEdit>(args, 1, input, (current, result) => {
        const known = new Set(current.messages.map((m) => m.id));
        return (result.putMessages ?? []).filter((m) => !known.has(m.id)).map((m): CreatedId => ({ kind: 'conversationMessage', id: m.id }));
      }),
  },
  createAsset: { at: 2, created: ([asset]) => assetCreated(asset as NewAsset) },
  editAsset: {
    at: 2,
    created: (args, input) =>
      fromEdit<StoredAsset, AssetEdit>(args, 1, input, (current, result) => {
        const known = new Set(current.annotations.map((a) => a.id));
        return (result.putAnnotations ?? []).filter((a) => !known.has(a.id)).map((a): CreatedId => ({ kind: 'annotation', id: a.id }));
      }),
  },
  deleteAsset: { at: 2, created: () => [] },
  putAnnotation: { at: 1, created: ([annotation]) => [{ kind: 'annotation', id: (annotation as { id: string }).id }] },
  deleteAnnotation: { at: 1, created: () => [], wrote: (result) => result === true },
  editAnchor: {
    at: 3,
    created: (args, input) =>
      fromEdit<AnchorRecord | undefined, AnchorEdit | undefined>(args, 2, input, (current, result) =>
        !current && result?.anchor ? [{ kind: 'anchor', id: result.anchor.id }] : [],
      ),
    // An association already made (or not there to undo) writes nothing, and queues nothing.
    wrote: (result) => (result as unknown[]).length > 0,
  },
};

/**
 * What a new asset creates: the asset, its formats (in its order), its annotations, its tags and
 * websites (one of the same text or URL as a stored one is that one: its id, given here, is then
 * never stored, and pairing it with the upstream's changes nothing).
 */
function assetCreated({ record, formats, annotations, tags, websites }: NewAsset): CreatedId[] {
  return [
    { kind: 'asset', id: record.id },
    ...formats.map((f): CreatedId => ({ kind: 'format', id: f.id })),
    ...annotations.map((a): CreatedId => ({ kind: 'annotation', id: a.id })),
    ...tags.map((t): CreatedId => ({ kind: 'tag', id: t.id })),
    ...websites.map((w): CreatedId => ({ kind: 'website', id: w.id })),
  ];
}

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
        // Only an operation declared to create records lists what it created (an update that puts a whole record creates nothing).
        const created = write.created(args, input);
        input.created = specOf(input).creates ? created : [];
        while (args.length < write.at) args.push(undefined);
        args[write.at] = input;
        const result = await value.apply(target, args);
        // A write that found nothing to change (an unknown id) wrote nothing, and queued nothing: the next write of the request may.
        written = write.wrote ? write.wrote(result) : result !== undefined;
        if (!written) used = false;
        return result;
      };
    },
  });
  return { storage: wrapped, queued: () => written };
}
