/**
 * The kinds of record a mirrored Pieces OS writes here, one row each: the store a kind lives in,
 * the collection its changes are logged under, how the records a batch gives are written and a
 * record the upstream no longer has is dropped, and how a record made here is re-keyed to the id
 * the upstream gave it: the record under its new key, and every field of another store that names
 * it. mirror.ts drives a batch over these rows, in their order (a kind's re-keying may rely on the
 * rows above it: an anchor finds the assets it lists under their new ids). Adding a kind is adding
 * a row.
 */
import type { IdPair, RecordKind } from '../schema.js';
import type { MirrorBatch } from '../storage.js';
import { listedIds } from '../anchor-links.js';
import { rewriteIds, rewriteIdsInJson } from '../../shared/rewrite-ids.js';
import { anchorIdsOf } from './conversations.js';
import type { MirrorWrite, RecordStore, ValueOf } from './mirror-write.js';

type Put = NonNullable<MirrorBatch['put']>;
type LoggedAs = 'application' | 'asset' | 'anchor' | 'activity' | 'conversation' | 'conversationMessage' | 'format' | 'annotation';

/** A pair being re-keyed: its two ids, and the whole id map for ids a record names besides it. */
export interface Rekeyed {
  local: string;
  upstream: string;
  upstreamOf: ReadonlyMap<string, string>;
  /** An id through the map (itself when the map does not know it). */
  swap(id: string): string;
}

/** Records of another store that name a re-keyed record, and how they name it. */
export interface Reference<R, S extends RecordStore | 'meta' = RecordStore | 'meta'> {
  store: S;
  /**
   * Where they are: by an index of their store holding the local id, by reading their store whole,
   * or the ids the re-keyed record itself lists (`moved`: as it is stored now).
   */
  find: { index: string; range?: (local: string) => IDBKeyRange } | 'all' | { listed: (record: R, ids: Rekeyed, moved: R) => string[] };
  /** The record naming the new id instead (the same object when it does not name it); none: only its change is logged. */
  set?: (record: ValueOf<S>, ids: Rekeyed) => ValueOf<S>;
  /** It hangs on the re-keyed record and takes the id the map gives it too (a message of a conversation). */
  owned?: true;
  /** Its changes are logged under this collection. */
  log?: LoggedAs;
}

export interface Kind<S extends RecordStore = RecordStore, P = unknown> {
  kind: RecordKind;
  store: S;
  log?: LoggedAs;
  /** The kind's records in a batch's `put`, and how one is written (a change logged only when it differs). */
  put?: { of: (put: Put) => readonly P[] | undefined; id: (given: P) => string; write: (w: MirrorWrite, given: P) => Promise<void> };
  /** A record the upstream no longer has, with what hangs on it. */
  drop?: (w: MirrorWrite, id: string) => Promise<void>;
  /** What replacing the kind's records whole also drops, once the records are (tags no asset lists any more). */
  replaced?: (w: MirrorWrite, keep: ReadonlySet<string>) => Promise<void>;
  rekey?: {
    /**
     * When the upstream's id is stored already (a stream told of it first): `keep` it (the local
     * record goes, what names it follows), `drop` the local record with what hangs on it (by the
     * kind's `drop`; nothing follows), or `replace` it with the local record moved.
     */
    stored: 'keep' | 'drop' | 'replace';
    /** The record under its new id, with the ids it holds itself through the map. */
    moved: (record: ValueOf<S>, ids: Rekeyed, stored: ValueOf<S> | undefined) => ValueOf<S>;
    refs: Array<Reference<ValueOf<S>>>;
  };
}

/** A row, checked against its own store's record type. */
const kind = <S extends RecordStore, P = never>(row: Kind<S, P>) => row as unknown as Kind;

/** A reference, checked against the two stores' record types. */
const ref = <R, S extends RecordStore | 'meta'>(reference: Reference<R, S>) => reference as unknown as Reference<R>;

/**
 * The record with its list `key` naming `local` by `upstream` instead (once: a list that named both keeps the
 * first place); itself when it does not name it.
 */
function renamedIn<T, K extends keyof T>(record: T, key: K, { local, upstream }: Rekeyed): T {
  const ids = record[key] as string[] | undefined;
  if (!ids?.includes(local)) return record;
  return { ...record, [key]: [...new Set(ids.map((id) => (id === local ? upstream : id)))] };
}

/** A record's wire JSON text with its own id (and, for a message, its conversation) replaced. */
function withIds(json: string, id: string, conversation?: string): string {
  const value = JSON.parse(json) as Record<string, unknown>;
  value.id = id;
  if (conversation !== undefined) value.conversation = { id: conversation };
  return JSON.stringify(value);
}

/** A record whose `json` text names ids the map knows, naming the upstream's. */
const jsonRenamed = <T extends { json: string }>(record: T, { upstreamOf }: Rekeyed): T => {
  const json = rewriteIdsInJson(record.json, upstreamOf);
  return json === record.json ? record : { ...record, json };
};

/** Drops the record of `store` and logs it, when it is there. */
const dropLogged = (store: 'applications' | 'activities' | 'anchors', collection: LoggedAs) => async (w: MirrorWrite, id: string) => {
  if (!(await w.get(store, id))) return;
  await w.delete(store, id);
  w.note(collection, id, true);
};

/** A tag or a website made here with an asset, merged into the upstream's when it is here already. */
const listing = <S extends 'tags' | 'websites'>(k: 'tag' | 'website', store: S) =>
  kind({
    kind: k,
    store,
    rekey: {
      stored: 'replace',
      moved: (item, { upstream, swap }, stored) =>
        ({ ...item, ...stored, id: upstream, assets: [...new Set([...(stored?.assets ?? []), ...item.assets.map(swap)])] }) as ValueOf<S>,
      refs: [ref({ store: 'assets', find: { listed: (_item: ValueOf<S>, _ids, moved) => moved.assets }, log: 'asset' })],
    },
  });

/** The kinds, in the order a batch writes them. */
export const KINDS: readonly Kind[] = [
  kind({
    kind: 'application',
    store: 'applications',
    log: 'application',
    put: { of: (put) => put.applications, id: (a) => a.id, write: (w, a) => w.putPlain('applications', 'application', a) },
    drop: dropLogged('applications', 'application'),
    rekey: {
      stored: 'keep',
      moved: (application, { upstream }) => ({ ...application, id: upstream }),
      // Its events, its sessions, and the connect and browser ids kept in meta.
      refs: [
        ref({
          store: 'events',
          find: { index: 'by-application-at', range: (local) => IDBKeyRange.bound([local, ''], [local, '\uffff']) },
          set: (event, { upstream }) => ({ ...event, application: upstream }),
        }),
        ref({
          store: 'sessions',
          find: 'all',
          set: (session, { local, upstream }) => (session.application === local ? { ...session, application: upstream } : session),
        }),
        ref({ store: 'meta', find: 'all', set: (value, { local, upstream }) => (value === local ? upstream : value) }),
      ],
    },
  }),
  kind({
    kind: 'session',
    store: 'sessions',
    put: { of: (put) => put.sessions, id: (s) => s.id, write: (w, s) => w.put('sessions', s) },
    drop: (w, id) => w.delete('sessions', id),
    rekey: { stored: 'keep', moved: (session, { upstream }) => ({ ...session, id: upstream }), refs: [] },
  }),
  kind({
    kind: 'asset',
    store: 'assets',
    log: 'asset',
    put: { of: (put) => put.assets, id: (a) => a.record.id, write: (w, a) => w.putAsset(a) },
    drop: (w, id) => w.dropAsset(id),
    // Tags and websites come with assets: one no asset lists any more (and not made here) goes.
    async replaced(w, keep) {
      for (const name of ['tags', 'websites'] as const) {
        for (const item of await w.tx.objectStore(name as 'tags').getAll())
          if (!item.assets.length && !keep.has(item.id)) await w.delete(name, item.id);
      }
    },
    rekey: {
      stored: 'drop',
      moved: (asset, { upstream, swap }) => ({
        ...asset,
        id: upstream,
        formats: asset.formats.map(swap),
        original: swap(asset.original),
        preview: swap(asset.preview),
      }),
      refs: [
        ref({
          store: 'formats',
          find: { index: 'by-asset' },
          owned: true,
          set: (format, { upstream }) => ({ ...format, asset: upstream }),
          log: 'format',
        }),
        ref({
          store: 'annotations',
          find: { index: 'by-asset' },
          owned: true,
          set: (annotation, { upstream }) => ({ ...annotation, asset: { id: upstream } }),
          log: 'annotation',
        }),
        ref({ store: 'tags', find: { index: 'by-asset' }, set: (tag, ids) => renamedIn(tag, 'assets', ids) }),
        ref({ store: 'websites', find: { index: 'by-asset' }, set: (site, ids) => renamedIn(site, 'assets', ids) }),
        ref({
          store: 'activities',
          find: { index: 'by-asset' },
          set: (activity, { upstream, upstreamOf }) => ({ ...activity, asset: upstream, event: rewriteIds(activity.event, upstreamOf) }),
          log: 'activity',
        }),
        ref({ store: 'anchors', find: { listed: (asset) => asset.anchors ?? [] }, set: jsonRenamed, log: 'anchor' }),
      ],
    },
  }),
  // Annotations made here on an asset (or on none) the upstream had already.
  kind({
    kind: 'annotation',
    store: 'annotations',
    log: 'annotation',
    put: {
      of: (put) => put.annotations,
      id: (a) => a.id,
      async write(w, annotation) {
        const stored = await w.get('annotations', annotation.id);
        if (stored && JSON.stringify(stored) === JSON.stringify(annotation)) return;
        await w.put('annotations', annotation);
        w.note('annotation', annotation.id);
        if (annotation.asset && (await w.get('assets', annotation.asset.id))) w.note('asset', annotation.asset.id);
      },
    },
    async drop(w, id) {
      const annotation = await w.get('annotations', id);
      if (!annotation) return;
      await w.delete('annotations', id);
      w.note('annotation', id, true);
      if (annotation.asset && (await w.get('assets', annotation.asset.id))) w.note('asset', annotation.asset.id);
    },
    rekey: {
      stored: 'replace',
      moved: (annotation, { upstream, swap }) => ({
        ...annotation,
        id: upstream,
        ...(annotation.asset ? { asset: { id: swap(annotation.asset.id) } } : {}),
      }),
      // Its asset's change is announced.
      refs: [ref({ store: 'assets', find: { listed: (_annotation, _ids, moved) => (moved.asset ? [moved.asset.id] : []) }, log: 'asset' })],
    },
  }),
  listing('tag', 'tags'),
  listing('website', 'websites'),
  kind({
    kind: 'anchor',
    store: 'anchors',
    log: 'anchor',
    put: { of: (put) => put.anchors, id: (a) => a.id, write: (w, a) => w.putPlain('anchors', 'anchor', a) },
    drop: dropLogged('anchors', 'anchor'),
    rekey: {
      stored: 'keep',
      moved: (anchor, ids) => ({ ...jsonRenamed(anchor, ids), id: ids.upstream }),
      refs: [
        // The assets it lists (re-keyed already, above) list it under its new id.
        ref({
          store: 'assets',
          find: { listed: (anchor, { swap }) => listedIds(anchor.json, 'assets').map(swap) },
          set: (asset, ids) => renamedIn(asset, 'anchors', ids),
          log: 'asset',
        }),
        // So do the conversations it lists (re-keyed after it: found by the ids it listed).
        ref({
          store: 'conversations',
          find: { listed: (anchor) => listedIds(anchor.json, 'conversations') },
          set: jsonRenamed,
          log: 'conversation',
        }),
      ],
    },
  }),
  kind({
    kind: 'activity',
    store: 'activities',
    log: 'activity',
    put: { of: (put) => put.activities, id: (a) => a.id, write: (w, a) => w.putPlain('activities', 'activity', a) },
    drop: dropLogged('activities', 'activity'),
  }),
  kind({
    kind: 'conversation',
    store: 'conversations',
    log: 'conversation',
    put: { of: (put) => put.conversations, id: (c) => c.conversation.id, write: (w, c) => w.putConversation(c) },
    drop: (w, id) => w.dropConversation(id),
    rekey: {
      stored: 'drop',
      moved: ({ seq: _seq, ...conversation }, ids) => {
        const deletedMessageIds = conversation.deletedMessageIds?.map(ids.swap);
        // No `seq`: a conversation new here takes the sequence number of its change.
        return {
          ...conversation,
          id: ids.upstream,
          json: withIds(conversation.json, ids.upstream),
          messageIds: conversation.messageIds.map(ids.swap),
          ...(deletedMessageIds ? { deletedMessageIds } : {}),
        } as ValueOf<'conversations'>;
      },
      refs: [
        ref({
          store: 'messages',
          find: { index: 'by-conversation' },
          owned: true,
          set: (message, { upstream }) => ({ ...message, conversation: upstream, json: withIds(message.json, message.id, upstream) }),
          log: 'conversationMessage',
        }),
        // The anchors it lists list it under its new id.
        ref({
          store: 'anchors',
          find: { listed: (conversation, { swap }) => anchorIdsOf(conversation.json).map(swap) },
          set: jsonRenamed,
          log: 'anchor',
        }),
      ],
    },
  }),
  kind({
    kind: 'conversationMessage',
    store: 'messages',
    log: 'conversationMessage',
    put: { of: (put) => put.messages, id: (m) => m.id, write: (w, m) => w.putMessage(m) },
    drop: (w, id) => w.dropMessage(id),
    rekey: {
      stored: 'keep',
      moved: (message, { upstream }) => ({ ...message, id: upstream, json: withIds(message.json, upstream) }),
      // Its conversation lists it under its new id.
      refs: [
        ref({
          store: 'conversations',
          find: { listed: (message) => [message.conversation] },
          set: (owner, ids) => renamedIn(renamedIn(owner, 'messageIds', ids), 'deletedMessageIds', ids),
          log: 'conversation',
        }),
      ],
    },
  }),
];

/** The row of a kind (none for a kind the mirror does not store). */
export const kindOf = (k: IdPair['kind']) => KINDS.find((row) => row.kind === k);
