/**
 * What the replayer decides about the outbox, as pure functions of its entries and the
 * mirror's write table (writes.ts): which records an entry names, how its ids are
 * rewritten with the ids the upstream gave, which entries a later delete makes useless
 * (dropped, never sent), and which follow an operation the upstream refused (set aside).
 */
import { OPERATIONS } from '../../core/routes.js';
import type { OutboxEntry, RecordKind } from '../../storage/schema.js';
import { rewriteIds } from '../../shared/rewrite-ids.js';
import { mirrorOf, readBodyPath, type IdPlace, type MirrorSpec, type QueuedCall } from './writes.js';

/** The route table's rows of the write operations. */
const ROUTES = new Map(OPERATIONS.filter((o) => mirrorOf(o.name)).map((o) => [o.name, o]));

/** The route table's row of a queued operation. */
export function routeOf(operation: string) {
  return ROUTES.get(operation);
}

/** The declaration of an entry's operation (writes.ts). */
export const specOf = (entry: Pick<OutboxEntry, 'operation'>): MirrorSpec => mirrorOf(entry.operation) ?? {};

/** The record an entry is about (its id and kind), when it names one. */
export function aboutOf(
  entry: Pick<OutboxEntry, 'operation' | 'params' | 'body' | 'application' | 'created'>,
): { kind: RecordKind; id: string } | undefined {
  const about = specOf(entry).about;
  if (!about) return undefined;
  const id = idAt(entry, about.at);
  return id === undefined ? undefined : { kind: about.kind, id };
}

/** The id an entry names at a place (`created`: the first record it created). */
export function idAt(entry: Pick<OutboxEntry, 'params' | 'body' | 'application' | 'created'>, at: IdPlace | 'created'): string | undefined {
  if (at === 'created') return entry.created[0]?.id;
  if (at === 'header:application') return entry.application;
  if (at.startsWith('param:')) return entry.params[at.slice(6)];
  return readBodyPath(entry.body, at.slice(5))[0];
}

/**
 * The ids of the records an entry is on: the record it is about, its path parameters and the
 * body fields its declaration lists. (The `application` header is rewritten, but does not make
 * an operation one "on" that application: every request of a client carries it.)
 */
export function touches(entry: OutboxEntry): Set<string> {
  const ids = new Set<string>();
  const about = aboutOf(entry);
  if (about) ids.add(about.id);
  for (const value of Object.values(entry.params)) ids.add(value);
  for (const place of Object.keys(specOf(entry).names ?? {})) for (const id of readBodyPath(entry.body, place.slice(5))) ids.add(id);
  for (const { id } of entry.created) ids.add(id);
  return ids;
}

/** The entry's arguments with every id it names that the map knows rewritten (path, body, application header). */
export function rewrite(
  entry: OutboxEntry,
  upstreamOf: ReadonlyMap<string, string>,
): QueuedCall & { application?: string; query?: string } {
  const swap = (id: string) => upstreamOf.get(id) ?? id;
  const params = Object.fromEntries(Object.entries(entry.params).map(([name, id]) => [name, swap(id)]));
  const body = rewriteIds(entry.body, upstreamOf);
  return {
    params,
    ...(body === undefined ? {} : { body }),
    ...(entry.application === undefined ? {} : { application: swap(entry.application) }),
    ...(entry.query === undefined ? {} : { query: entry.query }),
  };
}

/** The path an entry is sent to: its route's path with its (rewritten) parameters, and its query. */
export function pathOf(entry: Pick<OutboxEntry, 'operation'>, call: { params: Record<string, string>; query?: string }): string {
  const route = ROUTES.get(entry.operation);
  if (!route) throw new Error(`${entry.operation} is not a queued operation of this version.`);
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(call.params[name] ?? ''));
  return call.query ? `${path}?${call.query}` : path;
}

/** The record a create makes its record inside (deleted with it), when its declaration says so. */
function container(entry: OutboxEntry): string | undefined {
  const at = specOf(entry).within;
  if (!at) return undefined;
  if (at === 'header:application') return entry.application;
  if (at.startsWith('param:')) return entry.params[at.slice(6)];
  return readBodyPath(entry.body, at.slice(5))[0];
}

/**
 * Entries made useless by a later delete, to drop unsent: for every queued delete of a record,
 * every earlier entry about that record, every earlier create inside it (a message added to a
 * deleted conversation) and, in turn, every entry about what those created; and the delete
 * itself when the record was made by an entry still queued (create then delete sends nothing).
 * A record created inside another (a seeded message of a new conversation) keeps its delete:
 * the create that made it stays. Nothing collapses when an operation that stays names a record
 * a dropped create would have made (an anchor made on a conversation created and deleted while
 * away: the conversation must reach the upstream for the anchor to be made there).
 */
export function collapse(entries: readonly OutboxEntry[]): number[] {
  const queued = entries.filter((entry) => entry.state !== 'set-aside');
  const dropped = new Set<number>();
  queued.forEach((deletion, at) => {
    if (!specOf(deletion).deletes || dropped.has(deletion.seq)) return;
    const target = aboutOf(deletion)?.id;
    if (target === undefined) return;
    const gone = new Set([target]);
    const drop = new Set<number>();
    /** What the dropped creates made: never on the upstream then. */
    const unmade = new Set<string>();
    let createdHere = false;
    for (const entry of queued.slice(0, at)) {
      // An entry sent already (its outcome unknown) may have reached the upstream: it stays.
      if (dropped.has(entry.seq) || entry.state === 'sent') continue;
      const about = aboutOf(entry);
      const creates = specOf(entry).about?.at === 'created';
      const inside = creates && gone.has(container(entry) ?? '');
      if (!(about && gone.has(about.id)) && !inside) continue;
      drop.add(entry.seq);
      if (creates && about?.id === target) createdHere = true;
      for (const { id } of entry.created) {
        gone.add(id);
        unmade.add(id);
      }
    }
    if (createdHere) drop.add(deletion.seq);
    const kept = queued.filter((entry) => !drop.has(entry.seq) && !dropped.has(entry.seq) && entry.seq !== deletion.seq);
    if (kept.some((entry) => [...touches(entry)].some((id) => unmade.has(id)))) return;
    for (const seq of drop) dropped.add(seq);
  });
  return [...dropped];
}

/**
 * The ids the set-aside entries put out of reach: each one's records and what it created, and
 * transitively those of the entries set aside after it. An entry on one of them cannot be sent.
 */
export function unreachable(entries: readonly OutboxEntry[]): Map<string, OutboxEntry> {
  const blocked = new Map<string, OutboxEntry>();
  for (const entry of entries) {
    if (entry.state !== 'set-aside') continue;
    const about = aboutOf(entry);
    if (about) blocked.set(about.id, entry);
    for (const { id } of entry.created) blocked.set(id, entry);
  }
  return blocked;
}
