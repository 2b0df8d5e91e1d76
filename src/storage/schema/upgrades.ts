/**
 * The numbered upgrade steps that build the database (schema.ts), and what the steps that convert
 * records stored before them need. Append, never edit.
 */
import type { IDBPDatabase, IDBPTransaction, StoreNames } from 'idb';
import { randomUUID } from '../../shared/uuid.js';
import type { PiecesDB } from '../schema.js';
import type { AnnotationRecord, AssetRecord, ChangeRecord, FormatRecord } from './records.js';

export type UpgradeTransaction = IDBPTransaction<PiecesDB, StoreNames<PiecesDB>[], 'versionchange'>;
type UpgradeStep = (db: IDBPDatabase<PiecesDB>, tx: UpgradeTransaction) => void;

/** The mirror's stores (see STORES in schema.ts): the step's number is its place in UPGRADES. */
export const mirrorStores: UpgradeStep = (db) => {
  db.createObjectStore('outbox', { keyPath: 'seq', autoIncrement: true });
  db.createObjectStore('idmap', { keyPath: 'local' });
};

/** The generic materials' store (see STORES in schema.ts): the kinds with no hand-written store. */
export const materialStore: UpgradeStep = (db) => {
  db.createObjectStore('materials', { keyPath: ['kind', 'id'] }).createIndex('by-kind-seq', ['kind', 'seq'], { unique: true });
};

/** Step N brings a database from version N-1 to version N. Append, never edit. */
export const UPGRADES: UpgradeStep[] = [
  // 1: the initial layout.
  (db) => {
    db.createObjectStore('applications', { keyPath: 'id' });
    db.createObjectStore('sessions', { keyPath: 'id' });
    const events = db.createObjectStore('events', { keyPath: 'id' });
    events.createIndex('by-application-kind', ['application', 'kind']);
    events.createIndex('by-application-at', ['application', 'at']);
    events.createIndex('by-kind-at', ['kind', 'at']);
    const conversations = db.createObjectStore('conversations', { keyPath: 'id' });
    conversations.createIndex('by-seq', 'seq', { unique: true });
    const messages = db.createObjectStore('messages', { keyPath: 'id' });
    messages.createIndex('by-conversation', 'conversation');
    db.createObjectStore('assets', { keyPath: 'id' });
    db.createObjectStore('changes', { keyPath: 'seq', autoIncrement: true });
    db.createObjectStore('external', { keyPath: 'name' });
    db.createObjectStore('meta');
  },
  // 2: assets listed by name (assetsIdentifiersSnapshot's order).
  (_db, tx) => {
    tx.objectStore('assets').createIndex('by-name', 'name');
  },
  // 3: conversations and messages kept as their wire JSON text (was: objects).
  (_db, tx) => {
    const rewrite = async (name: 'conversations' | 'messages', from: string) => {
      let cursor = await tx.objectStore(name).openCursor();
      while (cursor) {
        const { [from]: value, ...rest } = cursor.value as unknown as Record<string, unknown>;
        if (value !== undefined) await cursor.update({ ...rest, json: JSON.stringify(value) } as never);
        cursor = await cursor.continue();
      }
    };
    // A failed rewrite aborts the upgrade: the database stays at version 2, unharmed.
    Promise.all([rewrite('conversations', 'conversation'), rewrite('messages', 'message')]).catch(() => tx.abort());
  },
  // 4: one change log for every collection ({collection, id}; was {conversation}); assets get a
  // format id; seeded anchors and annotations stored before are made whole (anchor `points`,
  // annotation references as `{id}`).
  (_db, tx) => {
    const each = async <N extends 'changes' | 'assets' | 'conversations'>(
      name: N,
      fix: (value: PiecesDB[N]['value']) => PiecesDB[N]['value'] | null,
    ) => {
      let cursor = await tx.objectStore(name).openCursor();
      while (cursor) {
        const fixed = fix(cursor.value as PiecesDB[N]['value']);
        if (fixed) await cursor.update(fixed as never);
        cursor = await cursor.continue();
      }
    };
    const steps = Promise.all([
      each('changes', (value) => {
        const { conversation, ...rest } = value as ChangeRecord & { conversation?: string };
        return conversation === undefined ? null : { ...rest, collection: 'conversation', id: conversation };
      }),
      // (Assets got a format id here; step 7 now converts them whole, format id included: two
      // cursors rewriting the same records in one transaction would race.)
    ]).then(() =>
      // After the rest, so that a database coming from version 2 has its step-3 rewrite done first.
      each('conversations', (value) => {
        const { conversation, ...rest } = value as PiecesDB['conversations']['value'] & { conversation?: unknown };
        const text = value.json ?? JSON.stringify(conversation);
        const json = wholeNestedModels(text);
        return json === value.json ? null : { ...rest, json };
      }),
    );
    steps.catch(() => tx.abort());
  },
  // 5: Conversations snapshots kept ready to send, by variant and range of snapshot order.
  (db) => {
    db.createObjectStore('snapshots', { keyPath: ['variant', 'start'] });
  },
  // 6: anchors as records of their own (those stored inside conversations are copied out, each
  // listing the conversations it came with) and the catalogue models' local state.
  (db, tx) => {
    db.createObjectStore('anchors', { keyPath: 'id' }).createIndex('by-created', 'created');
    db.createObjectStore('models', { keyPath: 'id' });
    const copy = async () => {
      const anchors = new Map<string, Record<string, unknown>>();
      let cursor = await tx.objectStore('conversations').openCursor();
      while (cursor) {
        // Read as step 4 leaves it (its rewrite may not have reached this record yet, in the same upgrade).
        const { conversation, json } = cursor.value as PiecesDB['conversations']['value'] & { conversation?: unknown };
        for (const anchor of anchorsOf(wholeNestedModels(json ?? JSON.stringify(conversation)))) {
          const conversations =
            (anchors.get(anchor.id as string)?.conversations as { iterable: Array<{ id: string }> } | undefined)?.iterable ?? [];
          const own = (anchor.conversations as { iterable?: Array<{ id: string }> } | undefined)?.iterable ?? [];
          const ids = [...new Set([...conversations, ...own, { id: cursor.value.id }].map((c) => c.id))];
          anchors.set(anchor.id as string, { ...anchor, conversations: { iterable: ids.map((id) => ({ id })) } });
        }
        cursor = await cursor.continue();
      }
      const store = tx.objectStore('anchors');
      for (const anchor of anchors.values()) {
        const created = (anchor.created as { value?: unknown } | undefined)?.value;
        await store.put({ id: anchor.id as string, created: typeof created === 'string' ? created : '', json: JSON.stringify(anchor) });
      }
    };
    // A failed copy aborts the upgrade: the database stays at version 5, unharmed.
    copy().catch(() => tx.abort());
  },
  // 7: assets made whole: formats, annotations, tags, websites and activities in stores of their own;
  // each asset stored before (one text, a language, a description) becomes an asset record, its one
  // format (original and preview) and a DESCRIPTION annotation.
  (db, tx) => {
    db.createObjectStore('formats', { keyPath: 'id' }).createIndex('by-asset', 'asset');
    db.createObjectStore('annotations', { keyPath: 'id' }).createIndex('by-asset', 'asset.id');
    const tags = db.createObjectStore('tags', { keyPath: 'id' });
    tags.createIndex('by-text', 'text');
    tags.createIndex('by-asset', 'assets', { multiEntry: true });
    const websites = db.createObjectStore('websites', { keyPath: 'id' });
    websites.createIndex('by-url', 'url');
    websites.createIndex('by-asset', 'assets', { multiEntry: true });
    const activities = db.createObjectStore('activities', { keyPath: 'id' });
    activities.createIndex('by-created', 'order');
    activities.createIndex('by-asset', 'asset');
    db.createObjectStore('search');
    const rewrite = async () => {
      let cursor = await tx.objectStore('assets').openCursor();
      while (cursor) {
        const old = cursor.value as unknown as LegacyAsset;
        if (typeof old.text === 'string') {
          const whole = wholeAsset({ ...old, formatId: old.formatId ?? randomUUID() });
          await Promise.all([
            cursor.update(whole.record),
            tx.objectStore('formats').put(whole.format),
            ...(whole.annotation ? [tx.objectStore('annotations').put(whole.annotation)] : []),
          ]);
        }
        cursor = await cursor.continue();
      }
    };
    rewrite().catch(() => tx.abort());
  },
  // 8: a mirrored Pieces OS: the outbox of operations queued while it was away, and the map of
  // ids created locally to the ids it gave them.
  mirrorStores,
  // 9: materials of the kinds the generic path stores (persons, hints, workstream summaries, …).
  materialStore,
];

/** An asset as stored before step 7: one text, its language, a description. */
interface LegacyAsset {
  id: string;
  name: string;
  language: string;
  text: string;
  created: string;
  description?: string;
  formatId: string;
}

/** The application that made the records of assets stored before step 7 (the service's own, `OS_SERVER`). */
export const LEGACY_APPLICATION = {
  id: 'a0b1c2d3-0000-4000-8000-00000000c0de',
  name: 'OS_SERVER',
  version: '1',
  platform: 'WEB',
  onboarded: true,
  privacy: 'OPEN',
  capabilities: 'LOCAL',
  mechanism: 'INTERNAL',
} as const;

/** Step 7's conversion of an asset stored before it; the annotation's id is derived from the asset's. */
function wholeAsset(old: LegacyAsset): { record: AssetRecord; format: FormatRecord; annotation?: AnnotationRecord } {
  const stamp = { value: old.created };
  return {
    record: {
      id: old.id,
      name: old.name,
      created: old.created,
      updated: old.created,
      creator: LEGACY_APPLICATION.id,
      mechanism: 'MANUAL',
      formats: [old.formatId],
      original: old.formatId,
      preview: old.formatId,
    },
    format: {
      id: old.formatId,
      asset: old.id,
      role: 'BOTH',
      classification: { generic: 'CODE', specific: old.language },
      application: { ...LEGACY_APPLICATION },
      created: old.created,
      updated: old.created,
      kind: 'fragment',
      text: old.text,
      size: new TextEncoder().encode(old.text).byteLength,
    },
    ...(old.description
      ? {
          annotation: {
            id: descriptionAnnotationId(old.id),
            created: stamp,
            updated: stamp,
            type: 'DESCRIPTION',
            text: old.description,
            mechanism: 'MANUAL',
            asset: { id: old.id },
          },
        }
      : {}),
  };
}

/**
 * The id of the DESCRIPTION annotation made for an asset stored before step 7 (the id its
 * description was answered with before): a stable UUID-shaped hash of the asset id.
 */
export function descriptionAnnotationId(assetId: string): string {
  const seed = `description:${assetId}`;
  let hex = '';
  for (let lane = 0; lane < 4; lane++) {
    let h = 0x811c9dc5 ^ lane;
    for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 0x01000193);
    hex += (h >>> 0).toString(16).padStart(8, '0');
  }
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The whole anchors (with `points`) a stored conversation's JSON holds. */
function anchorsOf(text: string): Array<Record<string, unknown>> {
  const conversation = JSON.parse(text) as { anchors?: { iterable?: Array<{ id?: unknown; reference?: Record<string, unknown> }> } };
  return (conversation.anchors?.iterable ?? []).flatMap((item) =>
    item.reference && typeof item.reference.id === 'string' && item.reference.points ? [item.reference] : [],
  );
}

/** Step 4's repair of a stored conversation's JSON: anchors get `points`, annotation links become `{id}`. */
function wholeNestedModels(text: string): string {
  const conversation = JSON.parse(text) as Record<string, { iterable?: Array<{ reference?: Record<string, unknown> }> }>;
  let changed = false;
  for (const item of conversation.anchors?.iterable ?? []) {
    const anchor = item.reference;
    if (anchor && !anchor.points) {
      // The anchor's path becomes its one point, as anchors are stored now.
      const { fullpath, platform, ...rest } = anchor;
      const point = {
        id: randomUUID(),
        fullpath,
        created: anchor.created,
        updated: anchor.updated,
        anchor: { id: anchor.id },
        ...(platform ? { platform } : {}),
      };
      item.reference = { ...rest, points: { iterable: typeof fullpath === 'string' ? [{ id: point.id, reference: point }] : [] } };
      changed = true;
    }
  }
  for (const item of conversation.annotations?.iterable ?? []) {
    const annotation = item.reference;
    for (const key of ['asset', 'person', 'model', 'anchor', 'conversation'] as const) {
      if (annotation && typeof annotation[key] === 'string') {
        annotation[key] = { id: annotation[key] };
        changed = true;
      }
    }
  }
  return changed ? JSON.stringify(conversation) : text;
}
