/**
 * Relevance ranking: an in-memory BM25F index over a few weighted fields, updated one document at a
 * time, deterministic (ties broken by id).
 */

import { languageText, tokenize } from './relevance/tokenize.js';

export { bestPassage } from './relevance/passage.js';
export { tokenize } from './relevance/tokenize.js';

export type Field = 'name' | 'language' | 'description' | 'text';

const FIELDS: readonly Field[] = ['name', 'language', 'description', 'text'];

/** How much a term in each field counts against one in the body text. */
const WEIGHTS: Record<Field, number> = { name: 3, language: 2, description: 2, text: 1 };
/** Length normalisation per field (BM25's b). */
const B: Record<Field, number> = { name: 0.5, language: 0, description: 0.75, text: 0.75 };
/** Term-frequency saturation (BM25's k1). */
const K1 = 1.2;

export interface IndexedDocument {
  id: string;
  /** What the document is (e.g. `asset`, `message`); searches may keep some kinds only. */
  kind: string;
  fields: Partial<Record<Field, string>>;
}

export interface Hit {
  id: string;
  kind: string;
  score: number;
}

export interface SearchOptions {
  /** Only documents of these kinds; default every kind. */
  kinds?: readonly string[];
  /** Only documents with these ids; default every document. */
  ids?: ReadonlySet<string>;
  /** At most this many hits (the best); default all. */
  limit?: number;
  /** The hits in no particular order (their scores as ever): for a caller that combines several searches. */
  unordered?: boolean;
}

interface Entry {
  id: string;
  kind: string;
  /** Term count per field. */
  lengths: ArrayLike<number>;
  /** The document's distinct terms (to remove its postings); null for a loaded document (its postings are in the runs). */
  terms: string[] | null;
}

/** Field counts packed into one 32-bit integer, 8 bits each (a count above 255 counts as 255). */
const MAX_COUNT = 255;
const unpack = (packed: number, f: number) => (packed >>> (8 * f)) & MAX_COUNT;

/** Best first; equal scores by id. */
export const byScore = (a: Hit, b: Hit): number => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export class RelevanceIndex {
  /**
   * Documents by slot; a deleted document leaves a hole that the next one fills. A loaded
   * document's entry is made from `#loaded` when first needed.
   */
  readonly #entries: Array<Entry | undefined> = [];
  readonly #free: number[] = [];
  /** Slot of each document by id; made from `#loaded` when first needed. */
  #slots = new Map<string, number>();
  #slotsMade = true;
  #count = 0;
  /** The documents of a loaded index, by slot (the first slots). */
  #loaded: { ids: readonly string[]; kinds: readonly string[]; lengths: Uint32Array } | null = null;
  /** Term → slot → packed field counts (documents set since the index was made or loaded). */
  readonly #postings = new Map<string, Map<number, number>>();
  /**
   * The postings of a loaded index (`load`), searched as they were stored: each term's run of
   * (slot, packed) pairs, found by the term's number (its place in the sorted terms). The loaded documents hold the first slots;
   * one removed leaves its pairs in the runs, skipped (`#loadedLive`), and its slot unused until saved.
   */
  #terms: readonly string[] | null = null;
  #offsets: Uint32Array | null = null;
  #counts: Uint32Array | null = null;
  #pairs: Uint32Array | null = null;
  /** 1 for each loaded slot whose document is still in the index. */
  #loadedLive: Uint8Array | null = null;
  /** How many loaded documents were removed (their pairs are skipped). */
  #loadedGone = 0;
  /** Sum of each field's length over every document (for the average). */
  readonly #totalLengths = FIELDS.map(() => 0);

  get size(): number {
    return this.#count;
  }

  has(id: string): boolean {
    return this.#slotMap().has(id);
  }

  #slotMap(): Map<string, number> {
    if (this.#slotsMade) return this.#slots;
    this.#slotsMade = true;
    this.#loaded!.ids.forEach((id, slot) => {
      if (this.#loadedLive![slot]) this.#slots.set(id, slot);
    });
    return this.#slots;
  }

  /** The document in a slot (a loaded one's entry made the first time), or undefined. */
  #entry(slot: number): Entry | undefined {
    const entry = this.#entries[slot];
    const loaded = this.#loaded;
    if (entry || !loaded || slot >= loaded.ids.length || !this.#loadedLive![slot]) return entry;
    const made: Entry = {
      id: loaded.ids[slot]!,
      kind: loaded.kinds[slot]!,
      lengths: loaded.lengths.subarray(slot * FIELDS.length, (slot + 1) * FIELDS.length),
      terms: null,
    };
    this.#entries[slot] = made;
    return made;
  }

  /** Adds a document, replacing any document with the same id. */
  set(document: IndexedDocument): void {
    this.delete(document.id);
    const counts = new Map<string, number>();
    const lengths = FIELDS.map((field, f) => {
      const raw = document.fields[field];
      if (!raw) return 0;
      const tokens = tokenize(field === 'language' ? languageText(raw) : raw);
      const unit = 1 << (8 * f);
      for (const term of tokens) {
        const packed = counts.get(term) ?? 0;
        if (unpack(packed, f) < MAX_COUNT) counts.set(term, (packed + unit) >>> 0);
      }
      return tokens.length;
    });
    const slot = this.#free.pop() ?? this.#entries.length;
    for (const [term, packed] of counts) {
      let posting = this.#postings.get(term);
      if (!posting) this.#postings.set(term, (posting = new Map()));
      posting.set(slot, packed);
    }
    lengths.forEach((length, f) => {
      this.#totalLengths[f]! += length;
    });
    this.#entries[slot] = { id: document.id, kind: document.kind, lengths, terms: [...counts.keys()] };
    this.#slotMap().set(document.id, slot);
    this.#count++;
  }

  /** Removes a document; false when there was none with that id. */
  delete(id: string): boolean {
    const slot = this.#slotMap().get(id);
    if (slot === undefined) return false;
    const entry = this.#entry(slot)!;
    if (entry.terms) {
      for (const term of entry.terms) {
        const posting = this.#postings.get(term)!;
        posting.delete(slot);
        if (posting.size === 0) this.#postings.delete(term);
      }
      this.#free.push(slot);
    } else {
      // A loaded document: its pairs stay in the runs, skipped from now on; its slot is not reused.
      this.#loadedLive![slot] = 0;
      this.#loadedGone++;
    }
    for (let f = 0; f < FIELDS.length; f++) this.#totalLengths[f]! -= entry.lengths[f]!;
    this.#entries[slot] = undefined;
    this.#slots.delete(id);
    this.#count--;
    return true;
  }

  /** The number of a term of the loaded index (binary search of its sorted terms), or -1. */
  #run(term: string): number {
    const terms = this.#terms;
    if (!terms) return -1;
    let low = 0;
    let high = terms.length - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const at = terms[mid]!;
      if (at === term) return mid;
      if (at < term) low = mid + 1;
      else high = mid - 1;
    }
    return -1;
  }

  /** Calls `each` with every (slot, packed counts) of a term's loaded run still in the index. */
  #eachLoaded(term: string, each: (slot: number, packed: number) => void): void {
    const t = this.#run(term);
    if (t < 0) return;
    const pairs = this.#pairs!;
    const live = this.#loadedLive!;
    for (let at = 2 * this.#offsets![t]!, end = at + 2 * this.#counts![t]!; at < end; at += 2) {
      if (live[pairs[at]!]) each(pairs[at]!, pairs[at + 1]!);
    }
  }

  /** How many documents hold a term. */
  #frequency(term: string): number {
    let count = this.#postings.get(term)?.size ?? 0;
    const t = this.#run(term);
    if (t < 0) return count;
    if (this.#loadedGone === 0) return count + this.#counts![t]!;
    this.#eachLoaded(term, () => count++);
    return count;
  }

  clear(): void {
    this.#entries.length = 0;
    this.#free.length = 0;
    this.#slots.clear();
    this.#slotsMade = true;
    this.#count = 0;
    this.#loaded = null;
    this.#postings.clear();
    this.#terms = this.#offsets = this.#counts = this.#pairs = this.#loadedLive = null;
    this.#loadedGone = 0;
    this.#totalLengths.fill(0);
  }

  /**
   * The index as plain data (strings and typed arrays, cheap to store in IndexedDB), to be
   * loaded again with `RelevanceIndex.load`: the same documents, the same scores.
   */
  save(): IndexState {
    const live: number[] = [];
    for (let slot = 0; slot < this.#entries.length; slot++) if (this.#entry(slot)) live.push(slot);
    const renumber = new Int32Array(this.#entries.length).fill(-1);
    live.forEach((slot, i) => {
      renumber[slot] = i;
    });
    const lengths = new Uint32Array(live.length * FIELDS.length);
    live.forEach((slot, i) => {
      lengths.set(this.#entries[slot]!.lengths as ArrayLike<number>, i * FIELDS.length);
    });
    // Sorted, so that a loaded index finds a term by binary search (no table to build).
    const terms = [...new Set([...(this.#terms ?? []), ...this.#postings.keys()])].sort();
    const counts = new Uint32Array(terms.length);
    const runs: Uint32Array[] = [];
    let total = 0;
    terms.forEach((term, t) => {
      const run = new Uint32Array(2 * this.#frequency(term));
      let at = 0;
      const add = (slot: number, packed: number) => {
        run[at++] = renumber[slot]!;
        run[at++] = packed;
      };
      this.#eachLoaded(term, add);
      for (const [slot, packed] of this.#postings.get(term) ?? []) add(slot, packed);
      counts[t] = run.length / 2;
      total += run.length;
      runs.push(run);
    });
    const postings = new Uint32Array(total);
    let at = 0;
    for (const run of runs) {
      postings.set(run, at);
      at += run.length;
    }
    // A term whose every document was removed is left out.
    const kept = terms.map((_, t) => t).filter((t) => counts[t]! > 0);
    return {
      ids: live.map((slot) => this.#entries[slot]!.id),
      kinds: live.map((slot) => this.#entries[slot]!.kind),
      lengths,
      terms: kept.length === terms.length ? terms : kept.map((t) => terms[t]!),
      counts: kept.length === terms.length ? counts : Uint32Array.from(kept, (t) => counts[t]!),
      postings,
    };
  }

  /**
   * An index from what `save` gave. Cheap: the postings are searched as they were stored;
   * documents set later go beside them, and a loaded document removed is skipped.
   * Throws when the state does not hold together (a kept index damaged), so that it is built afresh.
   */
  static load(state: IndexState): RelevanceIndex {
    const documents = state.ids.length;
    const disagree = () => new Error('The kept index does not hold together (its documents, terms and postings disagree).');
    if (
      state.kinds.length !== documents ||
      state.lengths.length !== documents * FIELDS.length ||
      state.counts.length !== state.terms.length
    )
      throw disagree();
    const index = new RelevanceIndex();
    const offsets = new Uint32Array(state.terms.length);
    let from = 0;
    for (let t = 0; t < state.terms.length; t++) {
      if (t > 0 && !(state.terms[t - 1]! < state.terms[t]!)) throw new Error('The kept index holds its terms out of order or twice.');
      offsets[t] = from;
      from += state.counts[t]!;
    }
    if (state.postings.length !== 2 * from) throw disagree();
    index.#terms = state.terms;
    index.#offsets = offsets;
    index.#counts = state.counts;
    index.#pairs = state.postings;
    index.#loadedLive = new Uint8Array(documents).fill(1);
    const { ids, kinds, lengths } = state;
    const totals = index.#totalLengths;
    for (let at = 0; at < lengths.length; at += 4) {
      totals[0]! += lengths[at]!;
      totals[1]! += lengths[at + 1]!;
      totals[2]! += lengths[at + 2]!;
      totals[3]! += lengths[at + 3]!;
    }
    // Entries and the id table are made when first needed (most searches need neither).
    index.#loaded = { ids, kinds, lengths };
    index.#entries.length = documents;
    index.#slotsMade = documents === 0;
    index.#count = documents;
    return index;
  }

  /** Documents matching the query, best first (ties by id), each with its BM25F score. */
  search(query: string, options: SearchOptions = {}): Hit[] {
    const n = this.#count;
    if (n === 0) return [];
    const kinds = options.kinds ? new Set(options.kinds) : null;
    // Per field: its weight, and the two terms of its length normalisation.
    const weights = FIELDS.map((field) => WEIGHTS[field]);
    const fixed = FIELDS.map((field) => 1 - B[field]);
    const perLength = FIELDS.map((field, f) => B[field] / (this.#totalLengths[f]! / n || 1));
    const scores = new Float64Array(this.#entries.length);
    const touched: number[] = [];
    // A loaded document is read from the loaded arrays (no entry made for it).
    const loaded = this.#loaded;
    const loadedCount = loaded?.ids.length ?? 0;
    const idOf = (slot: number) => (slot < loadedCount ? loaded!.ids[slot]! : this.#entries[slot]!.id);
    const kindOf = (slot: number) => (slot < loadedCount ? loaded!.kinds[slot]! : this.#entries[slot]!.kind);
    for (const term of new Set(tokenize(query))) {
      const frequency = this.#frequency(term);
      if (frequency === 0) continue;
      const idf = Math.log(1 + (n - frequency + 0.5) / (frequency + 0.5));
      const score = (slot: number, packed: number) => {
        if (kinds && !kinds.has(kindOf(slot))) return;
        if (options.ids && !options.ids.has(idOf(slot))) return;
        let lengths: ArrayLike<number>;
        let base = 0;
        if (slot < loadedCount) {
          lengths = loaded!.lengths;
          base = slot * FIELDS.length;
        } else {
          lengths = this.#entries[slot]!.lengths;
        }
        let tf = 0;
        for (let f = 0; f < 4; f++) {
          const count = (packed >>> (8 * f)) & MAX_COUNT;
          if (count !== 0) tf += (weights[f]! * count) / (fixed[f]! + perLength[f]! * lengths[base + f]!);
        }
        if (scores[slot] === 0) touched.push(slot);
        scores[slot]! += (idf * tf) / (K1 + tf);
      };
      this.#eachLoaded(term, score);
      for (const [slot, packed] of this.#postings.get(term) ?? []) score(slot, packed);
    }
    // Best first, equal scores by id; with a limit, only the best are kept (no whole sort).
    const better = (a: number, b: number) => scores[a]! > scores[b]! || (scores[a] === scores[b] && idOf(a) < idOf(b));
    let order: number[];
    const limit = options.limit;
    if (options.unordered && (limit === undefined || limit >= touched.length)) {
      order = touched;
    } else if (limit !== undefined && limit < touched.length) {
      order = [];
      if (limit > 0) {
        for (const slot of touched) {
          if (order.length === limit && !better(slot, order[limit - 1]!)) continue;
          let at = Math.min(order.length, limit - 1);
          while (at > 0 && better(slot, order[at - 1]!)) {
            order[at] = order[at - 1]!;
            at--;
          }
          order[at] = slot;
        }
      }
    } else {
      order = touched.sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0));
    }
    return order.map((slot) => ({ id: idOf(slot), kind: kindOf(slot), score: scores[slot]! }));
  }
}

/** A RelevanceIndex as plain data (see `save` and `load`). */
export interface IndexState {
  ids: string[];
  kinds: string[];
  /** Each document's field lengths, four per document. */
  lengths: Uint32Array;
  terms: string[];
  /** How many documents each term is in. */
  counts: Uint32Array;
  /** For each term in order, its postings: pairs of (document, packed field counts). */
  postings: Uint32Array;
}
