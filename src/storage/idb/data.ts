/** The whole store at once: every record read in one transaction (export), or written in one (seed, reset, import). */
import type { IDBPDatabase } from 'idb';
import type { GenericKind, PiecesDB } from '../schema.js';
import { materialKey, type Change, type Storage, type StoredData } from '../storage.js';
import { commit, log } from './transactions.js';
import {
  AUTHORIZATION_KEY,
  backupKeys,
  IDENTITY_KEY,
  OS_PERMISSIONS_KEY,
  OS_SETTINGS_KEY,
  SIGNED_IN_KEY,
  VISION_KEYS,
} from '../storage.js';

export function dataStore(db: IDBPDatabase<PiecesDB>): Pick<Storage, 'dumpData' | 'loadData'> {
  return {
    loadData: (data, { replace }) => loadData(db, data, { replace }),

    async dumpData() {
      const tx = db.transaction([...RECORD_STORES]);
      const [
        applications,
        sessions,
        events,
        conversations,
        messages,
        assets,
        external,
        formats,
        annotations,
        tags,
        websites,
        activities,
        anchors,
        models,
        materials,
      ] = await Promise.all([
        tx.objectStore('applications').getAll(),
        tx.objectStore('sessions').getAll(),
        tx.objectStore('events').getAll(),
        tx.objectStore('conversations').index('by-seq').getAll(),
        tx.objectStore('messages').getAll(),
        tx.objectStore('assets').index('by-name').getAll(),
        tx.objectStore('external').getAll(),
        tx.objectStore('formats').getAll(),
        tx.objectStore('annotations').getAll(),
        tx.objectStore('tags').getAll(),
        tx.objectStore('websites').getAll(),
        tx.objectStore('activities').index('by-created').getAll(),
        tx.objectStore('anchors').index('by-created').getAll(),
        tx.objectStore('models').getAll(),
        // By kind, each kind in creation order.
        tx.objectStore('materials').index('by-kind-seq').getAll(),
      ]);
      await tx.done;
      const byId = new Map(messages.map((m) => [m.id, m]));
      return {
        applications,
        sessions,
        events,
        conversations: conversations.map(({ seq: _seq, ...conversation }) => ({
          conversation,
          messages: conversation.messageIds.map((id) => byId.get(id)).filter((m): m is NonNullable<typeof m> => !!m),
        })),
        assets,
        formats,
        annotations,
        tags,
        websites,
        activities,
        external,
        anchors,
        models,
        materials: materials.map(({ seq: _seq, ...material }) => material),
      };
    },
  };
}

/** The stores of records (what dumpData reads, and what a replacing loadData clears). */
const RECORD_STORES = [
  'applications',
  'sessions',
  'events',
  'conversations',
  'messages',
  'assets',
  'external',
  'formats',
  'annotations',
  'tags',
  'websites',
  'activities',
  'anchors',
  'models',
  'materials',
] as const;

/**
 * Writes the records in one transaction (see Storage.loadData). With `unlessSeeded`, writes
 * nothing if the database was seeded before (its first start's initial data, once).
 */
export async function loadData(
  db: IDBPDatabase<PiecesDB>,
  data: StoredData,
  { replace, unlessSeeded = false }: { replace: boolean; unlessSeeded?: boolean },
): Promise<Change[]> {
  const names = [...RECORD_STORES, 'changes', 'meta', 'snapshots', 'outbox', 'idmap'] as const;
  const tx = db.transaction([...names], 'readwrite');
  const store = <N extends (typeof names)[number]>(name: N) => tx.objectStore(name);
  if (unlessSeeded && (await store('meta').get('seeded'))) {
    await tx.done;
    return [];
  }
  const [
    conversations,
    messageIds,
    assetIds,
    formatIds,
    annotationIds,
    applicationIds,
    activityIds,
    anchorIds,
    modelIds,
    materialKeys,
    signedIn,
    settings,
    vision,
    identity,
  ] = await Promise.all([
    store('conversations').getAll(),
    store('messages').getAllKeys(),
    store('assets').getAllKeys(),
    store('formats').getAllKeys(),
    store('annotations').getAllKeys(),
    store('applications').getAllKeys(),
    store('activities').getAllKeys(),
    store('anchors').getAllKeys(),
    store('models').getAllKeys(),
    store('materials').getAllKeys(),
    store('meta').get(SIGNED_IN_KEY),
    store('meta').get(OS_SETTINGS_KEY),
    store('meta').get(VISION_KEYS.status),
    store('meta').get(IDENTITY_KEY),
  ]);
  const existing = new Map(conversations.map((c) => [c.id, c]));
  const incoming = {
    conversation: new Set(data.conversations.map(({ conversation }) => conversation.id)),
    conversationMessage: new Set(data.conversations.flatMap(({ messages }) => messages.map((m) => m.id))),
    asset: new Set(data.assets.map((a) => a.id)),
    format: new Set(data.formats.map((f) => f.id)),
    annotation: new Set(data.annotations.map((a) => a.id)),
    application: new Set(data.applications.map((a) => a.id)),
    activity: new Set(data.activities.map((a) => a.id)),
    anchor: new Set(data.anchors.map((a) => a.id)),
    model: new Set(data.models.map((m) => m.id)),
  };
  const materials = data.materials ?? [];
  const incomingMaterials = new Set(materials.map(materialKey));
  // What goes: with `replace`, every record not given again; else the messages an updated conversation no longer has.
  const removed = (collection: keyof typeof incoming, ids: string[]) =>
    ids.filter((id) => !incoming[collection].has(id)).map((id) => ({ collection, id, deleted: true as const }));
  const gone = replace
    ? [
        ...removed('conversation', [...existing.keys()]),
        ...removed('conversationMessage', messageIds),
        ...removed('asset', assetIds),
        ...removed('format', formatIds),
        ...removed('annotation', annotationIds),
        ...removed('application', applicationIds),
        ...removed('activity', activityIds),
        ...removed('anchor', anchorIds),
        ...materialKeys
          .filter(([kind, id]) => !incomingMaterials.has(materialKey({ kind: kind as GenericKind, id })))
          .map(([kind, id]) => ({ collection: kind as GenericKind, id, deleted: true as const })),
        // A model's state removed is the catalogue's again: a change, not a deletion of the model.
        ...removed('model', modelIds).map(({ deleted: _deleted, ...change }) => change),
        // The local user is as configured again.
        ...(signedIn === undefined && identity === undefined ? [] : [{ collection: 'user' as const, id: 'local' }]),
        // The OS settings are the defaults again.
        ...(settings === undefined ? [] : [{ collection: 'osSettings' as const, id: OS_SETTINGS_KEY }]),
        // The vision processor is off again, with no events or calibrations.
        ...(vision === undefined ? [] : [{ collection: 'vision' as const, id: VISION_KEYS.status }]),
      ]
    : removed(
        'conversationMessage',
        data.conversations.flatMap(({ conversation }) => existing.get(conversation.id)?.messageIds ?? []),
      );
  // What is written: each conversation's change first, then its messages' (as a create logs them).
  const written: Array<Omit<Change, 'seq'>> = [
    ...data.conversations.flatMap(({ conversation, messages }) => [
      { collection: 'conversation' as const, id: conversation.id },
      ...messages.map(({ id }) => ({ collection: 'conversationMessage' as const, id })),
    ]),
    ...data.assets.map(({ id }) => ({ collection: 'asset' as const, id })),
    ...data.formats.map(({ id }) => ({ collection: 'format' as const, id })),
    ...data.annotations.map(({ id }) => ({ collection: 'annotation' as const, id })),
    ...data.applications.map(({ id }) => ({ collection: 'application' as const, id })),
    ...data.activities.map(({ id }) => ({ collection: 'activity' as const, id })),
    ...data.anchors.map(({ id }) => ({ collection: 'anchor' as const, id })),
    ...data.models.map(({ id }) => ({ collection: 'model' as const, id })),
    ...materials.map(({ kind, id }) => ({ collection: kind, id })),
  ];
  // A material stored before keeps its place in its kind's order (unless replaced); a new one's is its change's.
  const keptSeq = replace
    ? new Map<string, number>()
    : new Map(
        (await Promise.all(materials.map(({ kind, id }) => store('materials').get([kind, id])))).flatMap((m) =>
          m ? [[materialKey(m), m.seq] as const] : [],
        ),
      );
  const changes: Change[] = [];
  await commit(tx, function* () {
    if (replace) {
      for (const name of [...RECORD_STORES, 'outbox', 'idmap'] as const) yield store(name).clear();
      yield store('meta').delete(SIGNED_IN_KEY);
      yield store('meta').delete(OS_SETTINGS_KEY);
      yield store('meta').delete(OS_PERMISSIONS_KEY);
      for (const key of Object.values(VISION_KEYS)) yield store('meta').delete(key);
      yield store('meta').delete(IDENTITY_KEY);
      yield store('meta').delete(AUTHORIZATION_KEY);
    } else {
      for (const { id } of gone) yield store('messages').delete(id);
    }
    // A backup's kept content goes with its record.
    for (const { collection, id } of gone)
      if (collection === 'backup') for (const key of Object.values(backupKeys(id))) yield store('meta').delete(key);
    for (const application of data.applications) yield store('applications').put(application);
    for (const session of data.sessions) yield store('sessions').put(session);
    for (const event of data.events) yield store('events').put(event);
    for (const asset of data.assets) yield store('assets').put(asset);
    for (const format of data.formats) yield store('formats').put(format);
    for (const annotation of data.annotations) yield store('annotations').put(annotation);
    for (const tag of data.tags) yield store('tags').put(tag);
    for (const website of data.websites) yield store('websites').put(website);
    for (const activity of data.activities) yield store('activities').put(activity);
    for (const application of data.external) yield store('external').put(application);
    for (const anchor of data.anchors) yield store('anchors').put(anchor);
    for (const model of data.models) yield model.downloaded ? store('models').put(model) : store('models').delete(model.id);
    for (const { messages } of data.conversations) for (const message of messages) yield store('messages').put(message);
    // A new conversation's snapshot order is the sequence number of its change; an updated one keeps its place.
    yield log(store('changes'), [...gone, ...written], changes).then(() =>
      Promise.all([
        ...data.conversations.map(({ conversation }) => {
          const kept = replace ? undefined : existing.get(conversation.id)?.seq;
          const seq = kept ?? changes.find((c) => c.collection === 'conversation' && c.id === conversation.id && !c.deleted)!.seq;
          return store('conversations').put({ ...conversation, seq });
        }),
        ...materials.map(({ kind, id, value }) => {
          const seq =
            keptSeq.get(materialKey({ kind, id })) ?? changes.find((c) => c.collection === kind && c.id === id && !c.deleted)!.seq;
          return store('materials').put({ kind, id, seq, value });
        }),
      ]),
    );
    yield store('meta').put(true, 'seeded');
    // Loading may give a conversation another snapshot order (which the segments assume never happens): start them afresh.
    yield store('snapshots').clear();
  });
  return changes;
}
