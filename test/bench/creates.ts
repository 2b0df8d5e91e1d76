/**
 * Conversation creates for the benchmark, run in the page: through the service (default
 * `transferables`), and the raw IndexedDB floor writing the records the service writes for a
 * create, in the fewest requests the platform needs.
 */

/** The records the service wrote for one create (read back from its database): what the raw floor writes copies of. */
export interface CreateTemplate {
  conversation: { id: string; json: string; messageIds: string[] } & Record<string, unknown>;
  messages: Array<{ id: string; json: string } & Record<string, unknown>>;
  activity: { id: string } & Record<string, unknown>;
  /** The change rows, in the order the service logged them (without their keys). */
  changes: Array<{ collection: string; id: string }>;
}

/**
 * Runs in the page: creates one conversation with 5 messages through the service (default
 * `transferables`), then reads back from its database every record that create wrote: the
 * conversation, its messages, its activity and its change rows.
 */
export async function createTemplate(): Promise<CreateTemplate> {
  const request = <T>(r: IDBRequest<T>) =>
    new Promise<T>((resolve, reject) => {
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
  const text = (m: number) => `message ${m} of conversation 0: ${'lorem ipsum '.repeat(8)}`;
  const response = await fetch('http://localhost:1000/conversations/create', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      type: 'COPILOT',
      name: 'rate 0',
      messages: Array.from({ length: 5 }, (_, m) => ({ role: m % 2 ? 'ASSISTANT' : 'USER', fragment: { string: { raw: text(m) } } })),
    }),
  });
  const { id } = (await response.json()) as { id: string };
  // The activity is written after the answer in some versions: give it a moment.
  await new Promise((r) => setTimeout(r, 100));
  const db = await request(indexedDB.open('pieces-os-worker'));
  const tx = db.transaction(['conversations', 'messages', 'activities', 'changes']);
  const conversation = await request(tx.objectStore('conversations').get(id));
  const messages = await request(tx.objectStore('messages').index('by-conversation').getAll(id));
  const activity = (await request(tx.objectStore('activities').getAll())).find((a) => JSON.stringify(a.event).includes(id));
  const first = conversation.seq as number;
  const changes = (await request(tx.objectStore('changes').getAll(IDBKeyRange.lowerBound(first)))).map(({ collection, id }) => ({
    collection,
    id,
  }));
  db.close();
  const own = new Set([id, ...messages.map((m: { id: string }) => m.id), activity?.id]);
  const { seq: _seq, ...record } = conversation;
  return { conversation: record, messages, activity, changes: changes.filter((c: { id: string }) => own.has(c.id)) };
}

/**
 * Runs in the page: `count` creates of a conversation with 5 messages, `inFlight` at a time;
 * ms per create (wall time / count). Ours: POST /conversations/create with the default
 * `transferables` (the answer carries the messages). `raw` (the floor): the records the service
 * writes for a create (`template`: the conversation, its messages, its activity and its change
 * rows), with fresh ids, written straight to IndexedDB in the page in one transaction per create,
 * every request issued at once (no await inside: the page is its database's only writer, so it
 * knows the keys the change log will give), on a database with the service's stores and indexes.
 */
export async function createRate({
  count,
  inFlight,
  raw,
  template,
}: {
  count: number;
  inFlight: number;
  raw: boolean;
  template?: CreateTemplate;
}): Promise<number> {
  const text = (m: number, i: number) => `message ${m} of conversation ${i}: ${'lorem ipsum '.repeat(8)}`;
  const request = <T>(r: IDBRequest<T>) =>
    new Promise<T>((resolve, reject) => {
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
  const w = window as unknown as { rawDb?: IDBDatabase; rawSeq?: number };
  if (raw && !w.rawDb) {
    await request(indexedDB.deleteDatabase('bench-raw-creates'));
    const open = indexedDB.open('bench-raw-creates', 1);
    open.onupgradeneeded = () => {
      const db = open.result;
      db.createObjectStore('changes', { keyPath: 'seq', autoIncrement: true });
      db.createObjectStore('conversations', { keyPath: 'id' }).createIndex('by-seq', 'seq', { unique: true });
      db.createObjectStore('messages', { keyPath: 'id' }).createIndex('by-conversation', 'conversation');
      const activities = db.createObjectStore('activities', { keyPath: 'id' });
      activities.createIndex('by-created', 'order');
      activities.createIndex('by-asset', 'asset');
    };
    w.rawDb = await request(open);
    w.rawSeq = 1;
  }
  const one = async (i: number) => {
    if (!raw) {
      const response = await fetch('http://localhost:1000/conversations/create', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          type: 'COPILOT',
          name: `rate ${i}`,
          messages: Array.from({ length: 5 }, (_, m) => ({
            role: m % 2 ? 'ASSISTANT' : 'USER',
            fragment: { string: { raw: text(m, i) } },
          })),
        }),
      });
      if (!response.ok) throw new Error(`create answered ${response.status}`);
      await response.arrayBuffer();
      return;
    }
    const t = template!;
    // Fresh keys (the JSON inside the records keeps the template's ids: the same bytes, no work the platform needs).
    const id = crypto.randomUUID();
    const messageIds = t.messages.map(() => crypto.randomUUID());
    const activityId = crypto.randomUUID();
    const fresh = new Map<string, string>([
      [t.conversation.id, id],
      [t.activity.id, activityId],
      ...t.messages.map((m, k): [string, string] => [m.id, messageIds[k]!]),
    ]);
    const seq = w.rawSeq!;
    w.rawSeq = seq + t.changes.length;
    const tx = w.rawDb!.transaction(['changes', 'conversations', 'messages', 'activities'], 'readwrite');
    const changes = tx.objectStore('changes');
    for (const [k, change] of t.changes.entries()) changes.add({ collection: change.collection, id: fresh.get(change.id), seq: seq + k });
    tx.objectStore('conversations').add({ ...t.conversation, id, messageIds, seq });
    for (const [k, message] of t.messages.entries()) tx.objectStore('messages').add({ ...message, id: messageIds[k], conversation: id });
    tx.objectStore('activities').add({ ...t.activity, id: activityId });
    await new Promise((resolve, reject) => {
      tx.oncomplete = resolve;
      tx.onabort = () => reject(tx.error);
    });
  };
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < count) await one(next++);
    }),
  );
  return (performance.now() - start) / count;
}
