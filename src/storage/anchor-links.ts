/**
 * An anchor's associations as its wire JSON holds them: `conversations` (FlattenedConversations)
 * and `assets` (FlattenedAssets), each `{iterable: [{id}], indices: {id: position}}`, absent when
 * empty. Read and written here for the storage (an anchor unlisting a deleted conversation or
 * asset) and the core (an association made or undone) alike.
 */

export type AnchorList = 'conversations' | 'assets';

/** The ids an anchor's wire JSON lists under `key`, in order. */
export function listedIds(json: string, key: AnchorList): string[] {
  if (!json.includes(`"${key}"`)) return [];
  const list = (JSON.parse(json) as Record<string, { iterable?: Array<{ id?: unknown }> } | undefined>)[key];
  return (list?.iterable ?? []).flatMap((item) => (typeof item?.id === 'string' ? [item.id] : []));
}

/** The list `key` of a wire anchor with `ids` (absent when none). */
export function withList<T extends Record<string, unknown>>(anchor: T, key: AnchorList, ids: readonly string[]): T {
  const { [key]: _old, ...rest } = anchor;
  if (!ids.length) return rest as T;
  return { ...rest, [key]: { iterable: ids.map((id) => ({ id })), indices: Object.fromEntries(ids.map((id, i) => [id, i])) } } as T;
}

/** An anchor's wire JSON with `id` added to (kept in place if there) or taken from its list `key`. */
export function relinked(json: string, key: AnchorList, id: string, linked: boolean): string {
  const ids = listedIds(json, key).filter((item) => item !== id);
  const at = listedIds(json, key).indexOf(id);
  if (linked) ids.splice(at < 0 ? ids.length : at, 0, id);
  return JSON.stringify(withList(JSON.parse(json) as Record<string, unknown>, key, ids));
}
