/**
 * Long-term memory's index: every workstream summary and workstream event as a document in one
 * relevance index, read whole on first use and kept current through the service's change
 * notifications (a change of an event, a summary or an annotation marks what it touches; the next
 * recall re-reads those before it ranks), so that a recall never misses a write acknowledged before
 * it began.
 */
import type { Change, Storage } from '../../storage/storage.js';
import { RelevanceIndex } from '../relevance.js';
import { documentFields, documentKey, eventDocument, summaryAnnotations, summaryDocument, type MemoryDocument } from './document.js';

/** Documents indexed between two turns of the event loop while the index is built. */
const BUILD_SLICE = 2_000;

export class Memory {
  readonly #storage: Storage;
  #index = new RelevanceIndex();
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

  constructor(storage: Storage) {
    this.#storage = storage;
  }

  /** A committed change: an event, summary or annotation changed is re-read by the next recall. */
  changed(change: Change): void {
    if (this.#loading === null) return;
    if (change.collection === 'workstreamEvent' || change.collection === 'workstreamSummary')
      this.#dirty.add(documentKey({ kind: change.collection, id: change.id }));
    else if (change.collection === 'annotation') this.#dirtyNotes.add(change.id);
  }

  /** The whole store was replaced: read afresh on next use. */
  reset(): void {
    this.#generation++;
    this.#loading = null;
    this.#refreshing = null;
    this.#dirty.clear();
    this.#dirtyNotes.clear();
    this.#documents.clear();
    this.#owners.clear();
    this.#index = new RelevanceIndex();
  }

  #set(document: MemoryDocument) {
    const key = documentKey(document);
    this.#documents.set(key, document);
    this.#index.set({ id: key, kind: document.kind, fields: documentFields(document) });
  }

  #remove(key: string) {
    if (this.#documents.delete(key)) this.#index.delete(key);
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

  async #reread(generation: number) {
    const storage = this.#storage;
    const notes = [...this.#dirtyNotes];
    this.#dirtyNotes.clear();
    const keys = new Set(this.#dirty);
    this.#dirty.clear();
    try {
      // An annotation changed: the summary that lists it (or listed it, or that it names) is read again.
      const read = await Promise.all(notes.map((id) => storage.getAnnotation(id)));
      notes.forEach((id, i) => {
        const note = read[i];
        const owner = this.#owners.get(id) ?? (note?.summary as { id?: string } | undefined)?.id;
        if (owner) keys.add(documentKey({ kind: 'workstreamSummary', id: owner }));
      });
      await Promise.all(
        [...keys].map(async (key) => {
          const [kind, id] = key.split('/') as ['workstreamEvent' | 'workstreamSummary', string];
          const record = await storage.getMaterial(kind, id);
          if (generation !== this.#generation) return;
          if (!record) return this.#remove(key);
          if (kind === 'workstreamEvent') return this.#set(eventDocument(record));
          const listed = summaryAnnotations(record.value);
          const own = await Promise.all(listed.map((note) => storage.getAnnotation(note)));
          if (generation !== this.#generation) return;
          for (const [note, owner] of this.#owners) if (owner === id && !listed.includes(note)) this.#owners.delete(note);
          for (const note of listed) this.#owners.set(note, id);
          this.#set(summaryDocument(record, own));
        }),
      );
    } catch (error) {
      for (const key of keys) this.#dirty.add(key);
      for (const id of notes) this.#dirtyNotes.add(id);
      throw error;
    }
  }

  /** The index and its documents, current with every change announced before the call. */
  async current(): Promise<{ index: RelevanceIndex; document: (key: string) => MemoryDocument | undefined }> {
    await this.#current();
    return { index: this.#index, document: (key) => this.#documents.get(key) };
  }
}
