/**
 * Assets and what hangs on them (formats, annotations, tags, websites) and the activities
 * recorded about them: an asset is read whole in one transaction, and written whole (create,
 * replace, edit, delete) in one, with its changes.
 */
import type { IDBPDatabase, IDBPTransaction, StoreNames } from 'idb';
import type {
  ActivityRecord,
  AnchorRecord,
  AnnotationRecord,
  AssetRecord,
  CreatedId,
  PiecesDB,
  TagRecord,
  WebsiteRecord,
} from '../schema.js';
import { relinked } from '../anchor-links.js';
import type { AssetEdit, Change, NewAsset, OutboxScope, Storage, StoredAsset } from '../storage.js';
import { linkedOf, LINKED_READS, LINK_STORES, unlisting } from './links.js';
import { commit, log, queueing, type Queueable, type Queued, abortOnThrow } from './transactions.js';

type AssetMethods =
  | 'createAsset'
  | 'getAsset'
  | 'findAsset'
  | 'listAssets'
  | 'putAssets'
  | 'editAsset'
  | 'deleteAsset'
  | 'getAnnotation'
  | 'listAnnotations'
  | 'putAnnotation'
  | 'deleteAnnotation'
  | 'getTag'
  | 'getWebsite'
  | 'listActivities'
  | 'recordActivities'
  | 'editActivity';

const STORES = ['assets', 'formats', 'annotations', 'tags', 'websites', 'activities', 'changes', 'outbox'] as const;
/**
 * An edit or a delete reads (and a delete writes) the anchors an asset lists as well, and what its
 * other associations name (a delete unlists it from every record that lists it: links.ts).
 */
const EDIT_STORES = [...new Set([...STORES, ...LINK_STORES])] as Array<(typeof STORES)[number] | (typeof LINK_STORES)[number]>;
type AssetStores = (typeof EDIT_STORES)[number];
type Tx<Mode extends IDBTransactionMode> = IDBPTransaction<PiecesDB, StoreNames<PiecesDB>[] | AssetStores[], Mode>;

const stamp = (record: { created?: unknown; id: string }) =>
  `${typeof record.created === 'string' ? record.created : ((record.created as { value?: string } | undefined)?.value ?? '')} ${record.id}`;
/** Oldest first, ties by id. */
const byCreated = (a: { created?: unknown; id: string }, b: { created?: unknown; id: string }) => {
  const x = stamp(a);
  const y = stamp(b);
  return x < y ? -1 : x > y ? 1 : 0;
};

/** Joins an asset record with what hangs on it, from records read in the same transaction. */
function join(
  record: AssetRecord,
  formats: Map<string, PiecesDB['formats']['value']>,
  annotations: AnnotationRecord[],
  tags: TagRecord[],
  websites: WebsiteRecord[],
  anchors: ReadonlyMap<string, AnchorRecord>,
  linked?: StoredAsset['linked'],
): StoredAsset {
  const listed = (record.anchors ?? []).map((id) => anchors.get(id)).filter((a): a is AnchorRecord => !!a);
  return {
    ...(linked ? { linked } : {}),
    record,
    formats: record.formats.map((id) => formats.get(id)).filter((f): f is NonNullable<typeof f> => !!f),
    annotations: annotations.sort(byCreated),
    tags: tags.sort(byCreated),
    websites: websites.sort(byCreated),
    ...(listed.length ? { anchors: listed } : {}),
  };
}

/** The anchors records list, read in `tx` (one read each; none when no record lists one). */
async function anchorsOf(tx: Tx<IDBTransactionMode>, records: readonly AssetRecord[]): Promise<Map<string, AnchorRecord>> {
  const ids = [...new Set(records.flatMap((record) => record.anchors ?? []))];
  const found = await Promise.all(ids.map((id) => tx.objectStore('anchors').get(id)));
  return new Map(found.filter((a): a is AnchorRecord => !!a).map((a) => [a.id, a]));
}

async function readWhole(tx: Tx<IDBTransactionMode>, record: AssetRecord): Promise<StoredAsset> {
  const [formats, annotations, tags, websites, anchors, linked] = await Promise.all([
    Promise.all(record.formats.map((id) => tx.objectStore('formats').get(id))),
    tx.objectStore('annotations').index('by-asset').getAll(record.id),
    tx.objectStore('tags').index('by-asset').getAll(record.id),
    tx.objectStore('websites').index('by-asset').getAll(record.id),
    anchorsOf(tx, [record]),
    linkedOf(tx, record.links),
  ]);
  return join(record, new Map(formats.filter((f) => !!f).map((f) => [f!.id, f!])), annotations, tags, websites, anchors, linked);
}

async function assetIdOf(tx: Tx<IDBTransactionMode>, target: Parameters<Storage['findAsset']>[0]): Promise<string | undefined> {
  if ('asset' in target) return target.asset;
  if ('format' in target) return (await tx.objectStore('formats').get(target.format))?.asset;
  return (await tx.objectStore('annotations').get(target.annotation))?.asset?.id;
}

/** A tag or website to put an asset on: the stored one of the same text (URL) if there is one. */
async function resolve<T extends TagRecord | WebsiteRecord>(
  tx: Tx<'readwrite'>,
  store: 'tags' | 'websites',
  items: readonly T[],
  assetId: string,
): Promise<T[]> {
  const found = await Promise.all(
    items.map((item) =>
      store === 'tags'
        ? tx
            .objectStore('tags')
            .index('by-text')
            .get((item as TagRecord).text)
        : tx
            .objectStore('websites')
            .index('by-url')
            .get((item as WebsiteRecord).url),
    ),
  );
  const byId = new Map<string, T>();
  items.forEach((item, i) => {
    const base = (found[i] as T | undefined) ?? item;
    const current = byId.get(base.id) ?? base;
    byId.set(base.id, current.assets.includes(assetId) ? current : { ...current, assets: [...current.assets, assetId] });
  });
  return [...byId.values()];
}

/** Records of tags (websites) that lose `assetId`, from the stored ones that have it. */
const without = <T extends TagRecord | WebsiteRecord>(items: readonly T[], assetId: string, keep: ReadonlySet<string>) =>
  items.filter((item) => !keep.has(item.id)).map((item) => ({ ...item, assets: item.assets.filter((id) => id !== assetId) }));

const activityChanges = (activities: readonly ActivityRecord[]) => activities.map(({ id }) => ({ collection: 'activity' as const, id }));

/** The changes of the tags and websites a write puts (their `assets` changed: their identifier streams hear of it). */
const linkedChanges = (tags: readonly TagRecord[], websites: readonly WebsiteRecord[]) => [
  ...tags.map(({ id }) => ({ collection: 'tag' as const, id })),
  ...websites.map(({ id }) => ({ collection: 'website' as const, id })),
];

/**
 * The changes of the formats and annotations a write puts and deletes (their identifier streams
 * hear of each: a format's value, classification or asset changed, an annotation's text).
 */
const partChanges = (
  put: { formats?: readonly string[]; annotations?: readonly string[] },
  deleted: { formats?: readonly string[]; annotations?: readonly string[] } = {},
): Array<Omit<Change, 'seq'>> => [
  ...(put.formats ?? []).map((id) => ({ collection: 'format' as const, id })),
  ...(deleted.formats ?? []).map((id) => ({ collection: 'format' as const, id, deleted: true as const })),
  ...(put.annotations ?? []).map((id) => ({ collection: 'annotation' as const, id })),
  ...(deleted.annotations ?? []).map((id) => ({ collection: 'annotation' as const, id, deleted: true as const })),
];

const ids = (records: ReadonlyArray<{ id: string }>) => records.map(({ id }) => id);

/**
 * What a new asset creates: the asset, its formats (in its order), its annotations, its tags and
 * websites (one of the same text or URL as a stored one is that one: its id, given here, is then
 * never stored).
 */
const createdBy = ({ record, formats, annotations, tags, websites }: NewAsset): CreatedId[] => [
  { kind: 'asset', id: record.id },
  ...formats.map((f): CreatedId => ({ kind: 'format', id: f.id })),
  ...annotations.map((a): CreatedId => ({ kind: 'annotation', id: a.id })),
  ...tags.map((t): CreatedId => ({ kind: 'tag', id: t.id })),
  ...websites.map((w): CreatedId => ({ kind: 'website', id: w.id })),
];

interface Create {
  asset: NewAsset;
  activities: ActivityRecord[];
  /** The operation it queues (see Storage.queueing). */
  outbox?: Queued;
}

interface CreateJob extends Create {
  resolve(changes: Change[]): void;
  reject(error: unknown): void;
}

/** Most creates written in one group transaction. */
const GROUP_LIMIT = 64;

/** Writes new assets together, in one transaction; the changes of each, in order. */
async function createTogether(db: IDBPDatabase<PiecesDB>, group: readonly Create[]): Promise<Change[][]> {
  const tx = db.transaction([...STORES], 'readwrite') as unknown as Tx<'readwrite'>;
  const store = <N extends AssetStores>(name: N) => tx.objectStore(name);
  // Only assets with tags or websites read anything first (the stored ones of the same text or URL).
  const linked = await Promise.all(
    group.map(async ({ asset }) =>
      asset.tags.length || asset.websites.length
        ? {
            tags: await resolve(tx, 'tags', asset.tags, asset.record.id),
            websites: await resolve(tx, 'websites', asset.websites, asset.record.id),
          }
        : { tags: [], websites: [] },
    ),
  );
  const logged: Change[] = [];
  await commit(tx, function* () {
    for (const [i, { asset, activities }] of group.entries()) {
      // `add`: a create never replaces a stored asset.
      yield store('assets').add(asset.record);
      for (const format of asset.formats) yield store('formats').put(format);
      for (const annotation of asset.annotations) yield store('annotations').put(annotation);
      for (const tag of linked[i]!.tags) yield store('tags').put(tag);
      for (const site of linked[i]!.websites) yield store('websites').put(site);
      for (const activity of activities) yield store('activities').put(activity);
    }
    yield log(
      store('changes'),
      group.flatMap(({ asset, activities }, i) => [
        { collection: 'asset' as const, id: asset.record.id },
        ...activityChanges(activities),
        ...linkedChanges(linked[i]!.tags, linked[i]!.websites),
        ...partChanges({ formats: ids(asset.formats), annotations: ids(asset.annotations) }),
      ]),
      logged,
    );
    // Queued in the order the creates are written.
    for (const { outbox, asset } of group) if (outbox) yield outbox.append(store('outbox'), createdBy(asset));
  });
  let at = 0;
  return group.map(({ asset, activities }, i) =>
    logged.slice(
      at,
      (at += 1 + activities.length + linked[i]!.tags.length + linked[i]!.websites.length + asset.formats.length + asset.annotations.length),
    ),
  );
}

/** Group commit of asset creates (see Storage.createAsset). */
function groupCommit(db: IDBPDatabase<PiecesDB>): (create: Create) => Promise<Change[]> {
  const waiting: CreateJob[] = [];
  let writing = false;
  async function writeWaiting() {
    writing = true;
    try {
      while (waiting.length) {
        const group = waiting.splice(0, GROUP_LIMIT);
        try {
          const changes = await createTogether(db, group);
          for (const [i, job] of group.entries()) job.resolve(changes[i]!);
        } catch (error) {
          if (group.length === 1) {
            group[0]!.reject(error);
            continue;
          }
          // Nothing of the group was written: each on its own, failing alone.
          await Promise.all(group.map((job) => createTogether(db, [job]).then(([changes]) => job.resolve(changes!), job.reject)));
        }
      }
    } finally {
      writing = false;
    }
  }
  return (create) =>
    new Promise<Change[]>((resolve, reject) => {
      waiting.push({ ...create, resolve, reject });
      if (!writing) void writeWaiting();
    });
}

type AssetWrites = 'createAsset' | 'putAssets' | 'editAsset' | 'deleteAsset' | 'putAnnotation' | 'deleteAnnotation' | 'editActivity';

export function assetStore(db: IDBPDatabase<PiecesDB>): Queueable<AssetMethods, AssetWrites> {
  const create = groupCommit(db);
  const read = () =>
    db.transaction(['assets', 'formats', 'annotations', 'tags', 'websites', 'anchors', ...LINKED_READS]) as unknown as Tx<'readonly'>;
  const write = () => db.transaction([...EDIT_STORES], 'readwrite') as unknown as Tx<'readwrite'>;

  /** The writes; with a scope, the first that writes something queues its operation (creates written together queue in their order). */
  const writes = (scope?: OutboxScope): Pick<Storage, AssetWrites> => ({
    createAsset: (asset, activities) => queueing(scope, (outbox) => create({ asset, activities, ...(outbox ? { outbox } : {}) })),
    putAssets: (assets, activities = []) =>
      queueing(scope, async (outbox) => {
        const tx = write();
        const store = <N extends AssetStores>(name: N) => tx.objectStore(name);
        // What each asset had, to take away what it no longer has.
        const before = await Promise.all(
          assets.map(async ({ record }) => {
            const [existing, annotationIds, tags, websites] = await Promise.all([
              store('assets').get(record.id),
              store('annotations').index('by-asset').getAllKeys(record.id),
              store('tags').index('by-asset').getAll(record.id),
              store('websites').index('by-asset').getAll(record.id),
            ]);
            return { existing, annotationIds, tags, websites };
          }),
        );
        const resolved = await Promise.all(
          assets.map(async ({ record, tags, websites }) => ({
            tags: await resolve(tx, 'tags', tags, record.id),
            websites: await resolve(tx, 'websites', websites, record.id),
          })),
        );
        const changes: Change[] = [];
        const linked: Array<ReturnType<typeof linkedChanges>> = [];
        const parts: Array<ReturnType<typeof partChanges>> = [];
        await commit(tx, function* () {
          for (const [i, { record, formats, annotations }] of assets.entries()) {
            const { existing, annotationIds, tags, websites } = before[i]!;
            const keep = resolved[i]!;
            const formatIds = new Set(formats.map((f) => f.id));
            const annotationKeep = new Set(annotations.map((a) => a.id));
            const lostFormats = (existing?.formats ?? []).filter((id) => !formatIds.has(id));
            const lostAnnotations = annotationIds.filter((id) => !annotationKeep.has(id));
            parts.push(
              partChanges({ formats: ids(formats), annotations: ids(annotations) }, { formats: lostFormats, annotations: lostAnnotations }),
            );
            for (const id of lostFormats) yield store('formats').delete(id);
            for (const id of lostAnnotations) yield store('annotations').delete(id);
            const lostTags = without(tags, record.id, new Set(keep.tags.map((t) => t.id)));
            const lostWebsites = without(websites, record.id, new Set(keep.websites.map((w) => w.id)));
            linked.push(linkedChanges([...lostTags, ...keep.tags], [...lostWebsites, ...keep.websites]));
            for (const tag of lostTags) yield store('tags').put(tag);
            for (const site of lostWebsites) yield store('websites').put(site);
            yield store('assets').put(record);
            for (const format of formats) yield store('formats').put(format);
            for (const annotation of annotations) yield store('annotations').put(annotation);
            for (const tag of keep.tags) yield store('tags').put(tag);
            for (const site of keep.websites) yield store('websites').put(site);
          }
          for (const activity of activities) yield store('activities').put(activity);
          yield log(
            store('changes'),
            [
              ...assets.map(({ record }) => ({ collection: 'asset' as const, id: record.id })),
              ...activityChanges(activities),
              ...linked.flat(),
              ...parts.flat(),
            ],
            changes,
          );
          if (outbox) yield outbox.append(store('outbox'), assets.flatMap(createdBy));
        });
        return changes;
      }),

    editAsset: (target, edit) =>
      queueing(scope, async (outbox) => {
        const tx = write();
        const store = <N extends AssetStores>(name: N) => tx.objectStore(name);
        const id = await assetIdOf(tx, target);
        const record = id === undefined ? undefined : await store('assets').get(id);
        if (!record) {
          await tx.done;
          return undefined;
        }
        const current = await readWhole(tx, record);
        const result: AssetEdit = await abortOnThrow(tx, () => edit(current));
        const next = { ...result.record, id: record.id };
        const [addTags, addWebsites, removeTags, removeWebsites] = await Promise.all([
          resolve(tx, 'tags', result.addTags ?? [], record.id),
          resolve(tx, 'websites', result.addWebsites ?? [], record.id),
          Promise.all((result.removeTags ?? []).map((tag) => store('tags').get(tag))),
          Promise.all((result.removeWebsites ?? []).map((site) => store('websites').get(site))),
        ]);
        const taken = <T extends TagRecord | WebsiteRecord>(items: Array<T | undefined>) =>
          without(
            items.filter((item): item is T => !!item && item.assets.includes(record.id)),
            record.id,
            new Set(),
          );
        const activities = result.activities ?? [];
        const tagsPut = [...taken(removeTags), ...addTags];
        const websitesPut = [...taken(removeWebsites), ...addWebsites];
        // An annotation deleted is unlisted from every other record that lists it (src/storage/idb/links.ts).
        const others = result.deleteAnnotations?.length
          ? await unlisting(
              tx as never,
              result.deleteAnnotations.map((annotation) => ({ kind: 'annotation' as const, id: annotation })),
              undefined,
              [
                { kind: 'asset', id: record.id },
                ...[...removeTags, ...addTags].flatMap((tag) => (tag ? [{ kind: 'tag' as const, id: tag.id }] : [])),
                ...[...removeWebsites, ...addWebsites].flatMap((site) => (site ? [{ kind: 'website' as const, id: site.id }] : [])),
              ],
            )
          : undefined;
        const changes: Change[] = [];
        await commit(tx, function* () {
          if (others) yield* others.writes();
          yield store('assets').put(next);
          for (const format of result.putFormats ?? []) yield store('formats').put(format);
          for (const annotation of result.putAnnotations ?? []) yield store('annotations').put(annotation);
          for (const annotation of result.deleteAnnotations ?? []) yield store('annotations').delete(annotation);
          for (const tag of tagsPut) yield store('tags').put(tag);
          for (const site of websitesPut) yield store('websites').put(site);
          for (const activity of activities) yield store('activities').put(activity);
          yield log(
            store('changes'),
            [
              { collection: 'asset', id: record.id },
              ...activityChanges(activities),
              ...linkedChanges(tagsPut, websitesPut),
              ...partChanges(
                { formats: ids(result.putFormats ?? []), annotations: ids(result.putAnnotations ?? []) },
                { annotations: result.deleteAnnotations ?? [] },
              ),
              ...(others?.logged ?? []),
            ],
            changes,
          );
          if (outbox) {
            const known = new Set(current.annotations.map((a) => a.id));
            yield outbox.append(
              store('outbox'),
              (result.putAnnotations ?? []).filter((a) => !known.has(a.id)).map(({ id }) => ({ kind: 'annotation' as const, id })),
            );
          }
        });
        const state = await (async () => {
          const again = read();
          const whole = await readWhole(again, next);
          await again.done;
          return whole;
        })();
        return { state, changes };
      }),

    deleteAsset: (id, activities = []) =>
      queueing(scope, async (outbox) => {
        const tx = write();
        const store = <N extends AssetStores>(name: N) => tx.objectStore(name);
        const record = await store('assets').get(id);
        if (!record) {
          await tx.done;
          return undefined;
        }
        const [formatIds, annotationIds, tags, websites, ownActivities] = await Promise.all([
          store('formats').index('by-asset').getAllKeys(id),
          store('annotations').index('by-asset').getAllKeys(id),
          store('tags').index('by-asset').getAll(id),
          store('websites').index('by-asset').getAll(id),
          store('activities').index('by-asset').getAllKeys(id),
        ]);
        // The anchors that list it no longer do.
        const unlisted = [...(await anchorsOf(tx, [record])).values()].map((anchor) => ({
          ...anchor,
          json: relinked(anchor.json, 'assets', id, false),
        }));
        const lostTags = without(tags, id, new Set());
        const lostWebsites = without(websites, id, new Set());
        // Nor does any other record that lists it or its annotations (src/storage/idb/links.ts).
        const others = await unlisting(
          tx as never,
          [{ kind: 'asset', id }, ...annotationIds.map((key) => ({ kind: 'annotation' as const, id: key }))],
          undefined,
          // (Its tags and websites are written after this, as unlisting makes them: without it, and without its annotations.)
          unlisted.map((anchor) => ({ kind: 'anchor' as const, id: anchor.id })),
        );
        const changes: Change[] = [];
        await commit(tx, function* () {
          yield store('assets').delete(id);
          for (const anchor of unlisted) yield store('anchors').put(anchor);
          for (const key of formatIds) yield store('formats').delete(key);
          for (const key of annotationIds) yield store('annotations').delete(key);
          for (const tag of lostTags) yield store('tags').put(tag);
          for (const site of lostWebsites) yield store('websites').put(site);
          for (const key of ownActivities) yield store('activities').delete(key);
          for (const activity of activities) yield store('activities').put(activity);
          yield* others.writes();
          yield log(
            store('changes'),
            [
              { collection: 'asset', id, deleted: true },
              ...partChanges({}, { formats: formatIds, annotations: annotationIds }),
              ...ownActivities.map((key) => ({ collection: 'activity' as const, id: key, deleted: true as const })),
              ...activityChanges(activities),
              ...unlisted.map((anchor) => ({ collection: 'anchor' as const, id: anchor.id })),
              ...linkedChanges(lostTags, lostWebsites),
              ...others.logged,
            ],
            changes,
          );
          if (outbox) yield outbox.append(store('outbox'));
        });
        return changes;
      }),

    putAnnotation: (annotation) =>
      queueing(scope, async (outbox) => {
        const tx = db.transaction(['annotations', 'changes', 'outbox'], 'readwrite');
        const changes: Change[] = [];
        await commit(tx, function* () {
          yield tx.objectStore('annotations').put(annotation);
          yield log(tx.objectStore('changes'), partChanges({ annotations: [annotation.id] }), changes);
          if (outbox) yield outbox.append(tx.objectStore('outbox'), [{ kind: 'annotation', id: annotation.id }]);
        });
        return changes;
      }),

    deleteAnnotation: (id) =>
      queueing(scope, async (outbox) => {
        // Every store: what lists it no longer does (src/storage/idb/links.ts).
        const tx = db.transaction([...LINK_STORES], 'readwrite');
        const found = await tx.objectStore('annotations').get(id);
        const alone = !!found && !found.asset;
        const others = alone ? await unlisting(tx as never, [{ kind: 'annotation', id }]) : undefined;
        const changes: Change[] = [];
        await commit(tx, function* () {
          if (!alone) return;
          yield tx.objectStore('annotations').delete(id);
          yield* others!.writes();
          yield log(tx.objectStore('changes'), [...partChanges({}, { annotations: [id] }), ...others!.logged], changes);
          if (outbox) yield outbox.append(tx.objectStore('outbox'));
        });
        return alone ? changes : undefined;
      }),

    editActivity: (id, edit) =>
      queueing(scope, async (outbox) => {
        const tx = db.transaction(['activities', 'changes', 'outbox'], 'readwrite');
        const current = await tx.objectStore('activities').get(id);
        const next = await abortOnThrow(tx, () => edit(current));
        const changes: Change[] = [];
        await commit(tx, function* () {
          if (next === undefined || (next === null && !current)) return;
          if (next === null) yield tx.objectStore('activities').delete(id);
          else yield tx.objectStore('activities').put(next);
          yield log(
            tx.objectStore('changes'),
            [{ collection: 'activity', id, ...(next === null ? { deleted: true as const } : {}) }],
            changes,
          );
          if (outbox) yield outbox.append(tx.objectStore('outbox'), current ? [] : [{ kind: 'activity', id }]);
        });
        return changes;
      }),
  });

  return {
    ...writes(),
    queueing: writes,

    async getAsset(id) {
      const tx = read();
      const record = await tx.objectStore('assets').get(id);
      const whole = record && (await readWhole(tx, record));
      await tx.done;
      return whole;
    },

    async findAsset(target) {
      const tx = read();
      const id = await assetIdOf(tx, target);
      const record = id === undefined ? undefined : await tx.objectStore('assets').get(id);
      const whole = record && (await readWhole(tx, record));
      await tx.done;
      return whole;
    },

    async listAssets() {
      const tx = read();
      const [records, formats, annotations, tags, websites] = await Promise.all([
        tx.objectStore('assets').index('by-name').getAll(),
        tx.objectStore('formats').getAll(),
        tx.objectStore('annotations').getAll(),
        tx.objectStore('tags').getAll(),
        tx.objectStore('websites').getAll(),
      ]);
      const anchors = await anchorsOf(tx, records);
      const linked = await Promise.all(records.map((record) => linkedOf(tx, record.links)));
      await tx.done;
      const formatsById = new Map(formats.map((f) => [f.id, f]));
      const group = <T>(items: T[], owners: (item: T) => readonly string[]) => {
        const map = new Map<string, T[]>();
        for (const item of items) for (const owner of owners(item)) map.set(owner, [...(map.get(owner) ?? []), item]);
        return map;
      };
      const annotationsOf = group(annotations, (a) => (a.asset ? [a.asset.id] : []));
      const tagsOf = group(tags, (t) => t.assets);
      const websitesOf = group(websites, (w) => w.assets);
      return records.map((record, i) =>
        join(
          record,
          formatsById,
          annotationsOf.get(record.id) ?? [],
          tagsOf.get(record.id) ?? [],
          websitesOf.get(record.id) ?? [],
          anchors,
          linked[i],
        ),
      );
    },

    getAnnotation: (id) => db.get('annotations', id),
    async listAnnotations() {
      return (await db.getAll('annotations')).sort(byCreated);
    },
    getTag: (id) => db.get('tags', id),
    getWebsite: (id) => db.get('websites', id),
    listActivities: () => db.getAllFromIndex('activities', 'by-created'),
    async recordActivities(activities) {
      const tx = db.transaction(['activities', 'changes'], 'readwrite');
      const changes: Change[] = [];
      await commit(tx, function* () {
        for (const activity of activities) yield tx.objectStore('activities').put(activity);
        yield log(tx.objectStore('changes'), activityChanges(activities), changes);
      });
      return changes;
    },
  };
}
