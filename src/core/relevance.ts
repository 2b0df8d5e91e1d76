/**
 * Relevance ranking: an in-memory BM25F index over a few weighted fields, updated one document at a
 * time, deterministic (ties broken by id).
 */

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

const STOP_WORDS = new Set(
  (
    'a an and are as at be but by can could did do does for from had has have how i if in into is it its ' +
    'me my of on or our should so than that the their them then there these this those to was we were what ' +
    'when where which who why will with would you your about please explain tell show'
  ).split(' '),
);

/** Spelled-out names for common language extensions, so "python" finds `.py` assets. */
const LANGUAGE_NAMES: Record<string, string> = {
  ts: 'typescript',
  tsx: 'typescript',
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  py: 'python',
  rb: 'ruby',
  rs: 'rust',
  go: 'go',
  java: 'java',
  kt: 'kotlin',
  cs: 'csharp',
  cpp: 'cpp',
  cc: 'cpp',
  c: 'c',
  h: 'c',
  hpp: 'cpp',
  swift: 'swift',
  php: 'php',
  sh: 'shell',
  bash: 'shell',
  zsh: 'shell',
  sql: 'sql',
  md: 'markdown',
  html: 'html',
  css: 'css',
  scss: 'css',
  json: 'json',
  yaml: 'yaml',
  yml: 'yaml',
  toml: 'toml',
  dart: 'dart',
  lua: 'lua',
  r: 'r',
  scala: 'scala',
  txt: 'text',
};

/** Folds plural forms onto one term ("retries" → "retry", "timers" → "timer"). */
function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (/(?:xes|ches|shes)$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s') && !/(?:ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

/** The terms of one word; computed once per distinct word (words repeat across a store). */
const wordTerms = new Map<string, readonly string[]>();
const WORD_CACHE_LIMIT = 100_000;
/** Text with no code unit above U+007F (the same as `[\x00-\x7f]`, written without control characters). */
const ASCII_ONLY = /^[^\u0080-\uffff]*$/;

function termsOf(word: string): readonly string[] {
  let terms = wordTerms.get(word);
  if (terms) return terms;
  const ascii = ASCII_ONLY.test(word);
  if (!(ascii ? /[A-Z_]/ : /[\p{Lu}_]/u).test(word)) {
    terms = STOP_WORDS.has(word) ? [] : [stem(word)];
  } else {
    const parts = word
      .replace(ascii ? /([a-z0-9])([A-Z])/g : /([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
      .replace(ascii ? /([A-Z])([A-Z][a-z]{2,})/g : /(\p{Lu})(\p{Lu}\p{Ll}{2,})/gu, '$1 $2')
      .split(/[\s_]+/)
      .filter(Boolean)
      .map((part) => part.toLowerCase());
    const whole = parts.join('');
    terms = [
      ...(parts.length > 1 && !STOP_WORDS.has(whole) ? [stem(whole)] : []),
      ...parts.filter((part) => !STOP_WORDS.has(part)).map(stem),
    ];
  }
  if (wordTerms.size >= WORD_CACHE_LIMIT) wordTerms.clear();
  wordTerms.set(word, terms);
  return terms;
}

/**
 * Terms of a text: words lower-cased, identifiers split at camelCase,
 * snake_case and kebab-case boundaries (keeping the whole identifier too),
 * stop words dropped, plurals folded.
 */
export function tokenize(text: string): string[] {
  // ASCII text (most code) is split by a cheaper expression than the Unicode classes.
  const words = ASCII_ONLY.test(text) ? /[A-Za-z0-9_]+/g : /[\p{L}\p{N}_]+/gu;
  const terms: string[] = [];
  for (let match = words.exec(text); match; match = words.exec(text)) {
    for (const term of termsOf(match[0])) terms.push(term);
  }
  return terms;
}

function languageText(language: string): string {
  const key = language.toLowerCase();
  const name = LANGUAGE_NAMES[key];
  return name && name !== key ? `${key} ${name}` : key;
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
    const ids = this.#loaded!.ids;
    for (let slot = 0; slot < ids.length; slot++) if (this.#loadedLive![slot]) this.#slots.set(ids[slot]!, slot);
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
    for (let f = 0; f < lengths.length; f++) this.#totalLengths[f]! += lengths[f]!;
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
    for (let i = 0; i < live.length; i++) renumber[live[i]!] = i;
    const lengths = new Uint32Array(live.length * FIELDS.length);
    for (let i = 0; i < live.length; i++) lengths.set(this.#entries[live[i]!]!.lengths as ArrayLike<number>, i * FIELDS.length);
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

/**
 * The passage of `text` that best matches the query: the window of up to
 * `lines` lines holding the most query terms (the earliest on a tie), with
 * its character offsets. The whole text when it is that short.
 */
export function bestPassage(text: string, query: string, lines = 12): { text: string; start: number; end: number } {
  const all = text.split('\n');
  if (all.length <= lines) return { text, start: 0, end: text.length };
  const wanted = new Set(tokenize(query));
  const hits = all.map((line) => tokenize(line).filter((term) => wanted.has(term)).length);
  let best = 0;
  let bestHits = -1;
  let window = 0;
  for (let i = 0; i < all.length; i++) {
    window += hits[i]!;
    if (i >= lines) window -= hits[i - lines]!;
    const first = Math.max(0, i - lines + 1);
    if (i >= lines - 1 && window > bestHits) {
      bestHits = window;
      best = first;
    }
  }
  const offsets: number[] = [];
  let offset = 0;
  for (const line of all) {
    offsets.push(offset);
    offset += line.length + 1;
  }
  const start = offsets[best]!;
  const lastLine = best + lines - 1;
  const end = offsets[lastLine]! + all[lastLine]!.length;
  return { text: text.slice(start, end), start, end };
}
