/**
 * Ids made here rewritten to the ids a mirrored Pieces OS gave them, wherever a value holds them:
 * a queued operation's JSON body (outbox planning) and the stored records that name a re-keyed one
 * (the storage). An id is a UUID made here, so a string equal to one is that id, in whatever model:
 * an Asset sent back whole names its formats, annotations and tags in many places, and in
 * `indices` by id, as keys.
 */

/**
 * `value` with every string, and every object key, that the map knows replaced by what it maps to
 * (a structural walk: exact strings only, never parts of one). Unchanged parts are the same
 * objects, so a value with nothing to rewrite is returned as it is.
 */
export function rewriteIds<T>(value: T, upstreamOf: ReadonlyMap<string, string>): T {
  if (!upstreamOf.size) return value;
  const walk = (item: unknown): unknown => {
    if (typeof item === 'string') return upstreamOf.get(item) ?? item;
    if (Array.isArray(item)) {
      const mapped = item.map(walk);
      return mapped.some((m, i) => m !== item[i]) ? mapped : item;
    }
    if (typeof item !== 'object' || item === null) return item;
    let changed = false;
    const entries = Object.entries(item).map(([key, inner]) => {
      const k = upstreamOf.get(key) ?? key;
      const v = walk(inner);
      if (k !== key || v !== inner) changed = true;
      return [k, v] as const;
    });
    return changed ? Object.fromEntries(entries) : item;
  };
  return walk(value) as T;
}

/** JSON text with its ids rewritten as rewriteIds does; the same text when it names none the map knows. */
export function rewriteIdsInJson(json: string, upstreamOf: ReadonlyMap<string, string>): string {
  if (!upstreamOf.size) return json;
  const value: unknown = JSON.parse(json);
  const rewritten = rewriteIds(value, upstreamOf);
  return rewritten === value ? json : JSON.stringify(rewritten);
}
