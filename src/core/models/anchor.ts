/**
 * Anchors: a SeededAnchor becomes a whole Anchor (with its point), stored as a
 * record of its own; a conversation that lists an anchor holds it as a
 * ReferencedAnchor (`{id, reference}`) in its `anchors`, an asset lists its id
 * (its Asset shows the anchor whole), and the anchor lists the conversation in
 * its `conversations` and the asset in its `assets` (with `indices`).
 */
import { listedIds, relinked, type AnchorList } from '../../storage/anchor-links.js';
import type { AnchorRecord, AssetRecord, ConversationRecord } from '../../storage/schema.js';
import type { Clock } from '../clock.js';
import { anchorRecord, listedAnchor, seedAnchor, touched } from './conversation.js';
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

/** The ids of the conversations (or assets) an anchor lists. */
export const anchorConversations = (record: AnchorRecord): string[] => listedIds(record.json, 'conversations');
export const anchorAssets = (record: AnchorRecord): string[] => listedIds(record.json, 'assets');

/** Whether the anchor lists the record `id` in `list`. */
export const anchorLists = (record: AnchorRecord, list: AnchorList, id: string): boolean => listedIds(record.json, list).includes(id);

/** The anchor record listing (or no longer listing) the record `id` in `list`. */
export const anchorRelinked = (record: AnchorRecord, list: AnchorList, id: string, linked: boolean): AnchorRecord => ({
  ...record,
  json: relinked(record.json, list, id, linked),
});

/** Whether a conversation record lists the anchor `id` in its `anchors`. */
export function conversationListsAnchor(record: Pick<ConversationRecord, 'json'>, id: string): boolean {
  if (!record.json.includes(id)) return false;
  const anchors = (JSON.parse(record.json) as { anchors?: { iterable?: Array<{ id?: unknown }> } }).anchors?.iterable ?? [];
  return anchors.some((item) => item.id === id);
}

/** An asset record that lists the anchor (at the end, unless it does already), or no longer does; `updated` now. */
export function assetRelinked(record: AssetRecord, anchor: string, linked: boolean, clock: Clock): AssetRecord {
  const { anchors: current = [], ...rest } = record;
  const anchors = linked ? (current.includes(anchor) ? current : [...current, anchor]) : current.filter((id) => id !== anchor);
  return { ...rest, updated: clock.now().toISOString(), ...(anchors.length ? { anchors } : {}) };
}

/** A conversation record that lists the anchor (as a reference with its own fields), `updated` now. */
export function withAnchor(record: Omit<ConversationRecord, 'seq'>, anchor: JsonObject, clock: Clock): Omit<ConversationRecord, 'seq'> {
  return {
    ...record,
    json: touched(record, clock, (conversation) => {
      const anchors = (conversation.anchors as { iterable?: JsonObject[] } | undefined)?.iterable ?? [];
      const reference = { id: anchor.id!, reference: listedAnchor(anchor) };
      const at = anchors.findIndex((item) => item.id === anchor.id);
      conversation.anchors = { iterable: at < 0 ? [...anchors, reference] : anchors.map((item, i) => (i === at ? reference : item)) };
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
