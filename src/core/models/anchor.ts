/**
 * Anchors: a SeededAnchor becomes a whole Anchor (with its point), stored as a
 * record of its own; a conversation that lists an anchor holds it as a
 * ReferencedAnchor (`{id, reference}`) in its `anchors`, and the anchor lists
 * the conversation in its `conversations`.
 */
import type { AnchorRecord, ConversationRecord } from '../../storage/schema.js';
import type { Clock } from '../clock.js';
import { anchorRecord, seedAnchor, touched } from './conversation.js';
import { object, optional, string, uuid, type JsonObject } from '../validate.js';

export { anchorRecord };

/** A SeededAnchor (POST /anchors/create) as a whole Anchor, and the conversation it names, if any. */
export function parseSeededAnchor(body: unknown, clock: Clock): { anchor: JsonObject; conversation?: string; asset?: string } {
  const path = 'seededAnchor';
  const seeded = object(body, path);
  const conversation = optional(seeded, 'conversation', path, uuid);
  const asset = optional(seeded, 'asset', path, string);
  const anchor = seedAnchor({ ...seeded, ...(conversation ? { conversation } : {}) }, path, clock, conversation);
  return { anchor, ...(conversation ? { conversation } : {}), ...(asset ? { asset } : {}) };
}

/** The ids of the conversations an anchor lists. */
export function anchorConversations(record: AnchorRecord): string[] {
  const wire = JSON.parse(record.json) as { conversations?: { iterable?: Array<{ id?: unknown }> } };
  return (wire.conversations?.iterable ?? []).flatMap((item) => (typeof item.id === 'string' ? [item.id] : []));
}

/** A conversation record that lists the anchor (as a reference with it whole), `updated` now. */
export function withAnchor(record: Omit<ConversationRecord, 'seq'>, anchor: JsonObject, clock: Clock): Omit<ConversationRecord, 'seq'> {
  return {
    ...record,
    json: touched(record, clock, (conversation) => {
      const anchors = (conversation.anchors as { iterable?: JsonObject[] } | undefined)?.iterable ?? [];
      conversation.anchors = { iterable: [...anchors.filter((item) => item.id !== anchor.id), { id: anchor.id!, reference: anchor }] };
    }),
  };
}

/** A conversation record that no longer lists the anchor, `updated` now. */
export function withoutAnchor(record: Omit<ConversationRecord, 'seq'>, id: string, clock: Clock): Omit<ConversationRecord, 'seq'> {
  return {
    ...record,
    json: touched(record, clock, (conversation) => {
      const anchors = ((conversation.anchors as { iterable?: JsonObject[] } | undefined)?.iterable ?? []).filter((item) => item.id !== id);
      if (anchors.length) conversation.anchors = { iterable: anchors };
      else delete conversation.anchors;
    }),
  };
}

/** An Anchors body (`{"iterable":[…]}`) from stored records, in their order. */
export const anchorsJson = (records: AnchorRecord[]): string => `{"iterable":[${records.map((r) => r.json).join(',')}]}`;
