/**
 * Long-term memory's index: every workstream summary and workstream event as a document in one
 * relevance index, kept current through the service's change notifications (a change of an event,
 * a summary or an annotation marks what it touches; the next recall reads those again before it
 * ranks), so that a recall never misses a write acknowledged before it began.
 *
 * What ranking needs of a document is in memory: its terms (the index), its time and its
 * applications (the range and application filters). Its title and text are read when it is one of
 * the few hits returned (kept from then on, and kept for every document read whole).
 *
 * A start reads the index kept in the database (the `search` store's `ltm` record, kept.ts: the
 * index, each document's time and applications, the change it reflects) and the changes since; with none kept,
 * or one of another database, or more changes since than are worth reading one by one, every
 * summary and event is read and indexed, and the index kept a while later (KEEP_AFTER_MS after the
 * last change, like the assets' index; the keep is for the next start only).
 */
import type { Change, Storage } from '../../storage/storage.js';
import { RelevanceIndex } from '../relevance.js';
import { pack, unpack } from './kept.js';
import {
  type DocumentMeta,
  documentFields,
  documentKey,
  eventDocument,
  type MemoryDocument,
  summaryAnnotations,
  summaryDocument,
} from './document.js';

/** Documents indexed between two turns of the event loop while the index is built. */
const BUILD_SLICE = 2_000;
/** Changed documents read one by one over a kept index, at most (or a quarter of it): beyond, everything is read afresh. */
const REREAD_AT_MOST = 1_000;
/** How long after its last change the index is kept in the database. */
export const KEEP_AFTER_MS = 2_000;
/** The kept index's record in the `search` store. */
const KEPT = 'ltm';

const KINDS = ['workstreamSummary', 'workstreamEvent', 'annotation'] as const;

export class Memory {
  readonly #storage: Storage;
  #index = new RelevanceIndex();
  readonly #meta = new Map<string, DocumentMeta>();
  /** Documents read whole (every one after a build; the hits' after a kept index was loaded). */
  readonly #documents = new Map<string, MemoryDocument>();
  /** Which summary lists each annotation (to re-read the summary when its annotation changes). */
  readonly #owners = new Map<string, string>();
  #loading: Promise<void> | null = null;
  /** Events and summaries changed since last read (by key), and annotations changed. */
  readonly #dirty = new Set<string>();
  readonly #dirtyNotes = new Set<string>();
  #refreshing: Promise<void> | null = null;
  #generation = 0;
  #identity: string | undefined;
  /** The last change the index reflects; the last announced; the last kept (-1: none). */
  #seq = 0;
  #announced = 0;
  #keptSeq = -1;
  #keepTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(storage: Storage) {
    this.#storage = storage;
  }

  /** A committed change: an event, summary or annotation changed is read again by the next recall. */
  changed(change: Change): void {
    if (change.collection !== 'workstreamEvent' && change.collection !== 'workstreamSummary' && change.collection !== 'annotation') return;
    this.#announced = Math.max(this.#announced, change.seq);
    if (this.#loading === null) return;
    if (change.collection === 'annotation') this.#dirtyNotes.add(change.id);
    else this.#dirty.add(documentKey({ kind: change.collection, id: change.id }));
  }

  /** The whole store was replaced: read afresh on next use. */
  reset(): void {
    this.#generation++;
    this.#loading = null;
    this.#refreshing = null;
    this.#dirty.clear();
    this.#dirtyNotes.clear();
    this.#meta.clear();
    this.#documents.clear();
    this.#owners.clear();
    this.#index = new RelevanceIndex();
    this.#seq = 0;
    this.#keptSeq = -1;
    clearTimeout(this.#keepTimer);
    this.#keepTimer = undefined;
  }

  #set(document: MemoryDocument) {
    const key = documentKey(document);
    this.#documents.set(key, document);
    this.#meta.set(key, {
      kind: document.kind,
      at: document.at,
      ...(document.applications ? { applications: document.applications } : {}),
    });
    this.#index.set({ id: key, kind: document.kind, fields: documentFields(document) });
  }

  #remove(key: string) {
    this.#documents.delete(key);
    if (this.#meta.delete(key)) this.#index.delete(key);
  }

  #load(): Promise<void> {
    const generation = this.#generation;
    this.#loading ??= this.#read(generation).catch((error: unknown) => {
      if (generation === this.#generation) this.#loading = null;
      throw error;
    });
    return this.#loading;
  }

  async #read(generation: number) {
    if (await this.#readKept(generation)) return;
    const { seq } = await this.#storage.listIds('workstreamEvent');
    const [summaries, events, annotations] = await Promise.all([
      this.#storage.listMaterials('workstreamSummary'),
      this.#storage.listMaterials('workstreamEvent'),
      this.#storage.listAnnotations(),
    ]);
    if (generation !== this.#generation) return;
    const notes = new Map(annotations.map((note) => [note.id, note]));
    for (const summary of summaries) {
      const listed = summaryAnnotations(summary.value);
      for (const id of listed) this.#owners.set(id, summary.id);
      this.#set(
        summaryDocument(
          summary,
          listed.map((id) => notes.get(id)),
        ),
      );
    }
    // Indexed a slice at a time, so that other requests are answered meanwhile.
    for (let at = 0; at < events.length; at += BUILD_SLICE) {
      if (at > 0) await new Promise((resolve) => setTimeout(resolve, 0));
      if (generation !== this.#generation) return;
      for (const event of events.slice(at, at + BUILD_SLICE)) this.#set(eventDocument(event));
    }
    this.#seq = seq;
    this.#keepLater();
  }

  /**
   * The kept index and the changes since, marked to be read again; false when there is none that
   * holds together, of this database, with the change log still reaching back to it and few enough changes since.
   */
  async #readKept(generation: number): Promise<boolean> {
    const [record, identity] = await Promise.all([this.#storage.getSearchIndex(KEPT).catch(() => undefined), this.#storage.identity()]);
    const kept = record && unpack(record.value, identity);
    if (!kept) return false;
    const since = await Promise.all(KINDS.map((kind) => this.#storage.changesSince(record.seq, kind)));
    const changed = since.reduce((sum, part) => sum + part.changes.length, 0);
    if (since.some((part) => !part.complete) || changed > Math.max(REREAD_AT_MOST, kept.index.ids.length / 4)) return false;
    let index: RelevanceIndex;
    try {
      index = RelevanceIndex.load(kept.index);
    } catch {
      return false;
    }
    if (generation !== this.#generation) return true;
    this.#index = index;
    for (const [i, key] of kept.index.ids.entries()) this.#meta.set(key, kept.metas[i]!);
    for (const [k, part] of since.entries()) {
      for (const change of part.changes) {
        if (KINDS[k] === 'annotation') this.#dirtyNotes.add(change.id);
        else this.#dirty.add(documentKey({ kind: KINDS[k] as MemoryDocument['kind'], id: change.id }));
      }
    }
    this.#seq = record.seq;
    this.#keptSeq = record.seq;
    this.#announced = Math.max(this.#announced, ...since.map((part) => part.seq));
    return true;
  }

  /** Keeps the index in the database once no change came for KEEP_AFTER_MS (for the next start). */
  #keepLater() {
    clearTimeout(this.#keepTimer);
    this.#keepTimer = setTimeout(() => {
      this.#keepTimer = undefined;
      void this.#keep();
    }, KEEP_AFTER_MS);
    // A timer of its own never holds a process (Node) open.
    (this.#keepTimer as { unref?: () => void }).unref?.();
  }

  async #keep() {
    try {
      const generation = this.#generation;
      await this.#current();
      if (this.#dirty.size || this.#dirtyNotes.size || this.#seq === this.#keptSeq || generation !== this.#generation) return;
      const seq = this.#seq;
      const index = this.#index.save();
      const value = pack(
        await this.#storage.identity(),
        index,
        index.ids.map((key) => this.#meta.get(key)!),
      );
      // The owners of annotations are not kept: a changed annotation names its summary itself.
      await this.#storage.putSearchIndex(KEPT, { seq, value });
      if (generation === this.#generation) this.#keptSeq = seq;
    } catch {
      // Kept for speed only: a failed write costs a build on the next start.
    }
  }

  async #sameDatabase() {
    const identity = await this.#storage.identity();
    if (this.#identity !== undefined && identity !== this.#identity) this.reset();
    this.#identity = identity;
  }

  /** Loaded, and every change announced so far read again. */
  async #current(): Promise<void> {
    await this.#sameDatabase();
    await this.#load();
    while (this.#refreshing !== null) await this.#refreshing.catch(() => {});
    if (this.#dirty.size === 0 && this.#dirtyNotes.size === 0) return;
    const run = this.#reread(this.#generation);
    this.#refreshing = run;
    try {
      await run;
    } finally {
      if (this.#refreshing === run) this.#refreshing = null;
    }
  }

  /** A stored summary or event read whole (a summary with its annotations), or undefined when it is gone. */
  async #readDocument(key: string): Promise<MemoryDocument | undefined> {
    const [kind, id] = key.split('/') as [MemoryDocument['kind'], string];
    const record = await this.#storage.getMaterial(kind, id);
    if (!record) return undefined;
    if (kind === 'workstreamEvent') return eventDocument(record);
    const listed = summaryAnnotations(record.value);
    for (const note of listed) this.#owners.set(note, id);
    return summaryDocument(record, await Promise.all(listed.map((note) => this.#storage.getAnnotation(note))));
  }

  async #reread(generation: number) {
    const notes = [...this.#dirtyNotes];
    this.#dirtyNotes.clear();
    const keys = new Set(this.#dirty);
    this.#dirty.clear();
    const upTo = this.#announced;
    try {
      // An annotation changed: the summary that lists it (or that it names) is read again.
      const read = await Promise.all(notes.map((id) => this.#storage.getAnnotation(id)));
      notes.forEach((id, i) => {
        const owner = this.#owners.get(id) ?? (read[i]?.summary as { id?: string } | undefined)?.id;
        if (owner) keys.add(documentKey({ kind: 'workstreamSummary', id: owner }));
      });
      const documents = await Promise.all([...keys].map((key) => this.#readDocument(key)));
      if (generation !== this.#generation) return;
      [...keys].forEach((key, i) => {
        const document = documents[i];
        if (document) this.#set(document);
        else this.#remove(key);
      });
      if (this.#dirty.size === 0 && this.#dirtyNotes.size === 0) this.#seq = Math.max(this.#seq, upTo);
      this.#keepLater();
    } catch (error) {
      for (const key of keys) this.#dirty.add(key);
      for (const id of notes) this.#dirtyNotes.add(id);
      throw error;
    }
  }

  /** The index and what ranking needs of each document, current with every change announced before the call. */
  async current(): Promise<{ index: RelevanceIndex; meta: (key: string) => DocumentMeta | undefined }> {
    await this.#current();
    return { index: this.#index, meta: (key) => this.#meta.get(key) };
  }

  /** The documents of these keys, whole (read from the store when not in memory); undefined for one gone. */
  async documents(keys: readonly string[]): Promise<Array<MemoryDocument | undefined>> {
    const generation = this.#generation;
    return Promise.all(
      keys.map(async (key) => {
        const known = this.#documents.get(key);
        if (known) return known;
        const document = await this.#readDocument(key);
        if (document && generation === this.#generation && this.#meta.has(key)) this.#documents.set(key, document);
        return document;
      }),
    );
  }
}
