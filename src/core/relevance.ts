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
  /** At most this many hits; default all. */
  limit?: number;
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
  ts: 'typescript', tsx: 'typescript', js: 'javascript', jsx: 'javascript', mjs: 'javascript', cjs: 'javascript',
  py: 'python', rb: 'ruby', rs: 'rust', go: 'go', java: 'java', kt: 'kotlin', cs: 'csharp', cpp: 'cpp', cc: 'cpp',
  c: 'c', h: 'c', hpp: 'cpp', swift: 'swift', php: 'php', sh: 'shell', bash: 'shell', zsh: 'shell', sql: 'sql',
  md: 'markdown', html: 'html', css: 'css', scss: 'css', json: 'json', yaml: 'yaml', yml: 'yaml', toml: 'toml',
  dart: 'dart', lua: 'lua', r: 'r', scala: 'scala', txt: 'text',
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

function termsOf(word: string): readonly string[] {
  let terms = wordTerms.get(word);
  if (terms) return terms;
  const ascii = /^[\x00-\x7f]*$/.test(word);
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
  const words = /^[\x00-\x7f]*$/.test(text) ? /[A-Za-z0-9_]+/g : /[\p{L}\p{N}_]+/gu;
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
  lengths: number[];
  /** The document's distinct terms (to remove its postings); null until needed for a loaded document. */
  terms: string[] | null;
}

/** Field counts packed into one 32-bit integer, 8 bits each (a count above 255 counts as 255). */
const MAX_COUNT = 255;
const unpack = (packed: number, f: number) => (packed >>> (8 * f)) & MAX_COUNT;

/** Best first; equal scores by id. */
export const byScore = (a: Hit, b: Hit): number => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export class RelevanceIndex {
  /** Documents by slot; a deleted document leaves a hole that the next one fills. */
  readonly #entries: Array<Entry | undefined> = [];
  readonly #free: number[] = [];
  readonly #slots = new Map<string, number>();
  /** Term → slot → packed field counts. */
  readonly #postings = new Map<string, Map<number, number>>();
  /**
   * Postings of a loaded index (`load`) not yet needed: each term's run of (slot, packed)
   * pairs in one array, made a Map the first time the term is searched or written.
   */
  #runs: Map<string, number> | null = null;
  #packed: Uint32Array | null = null;
  /** Sum of each field's length over every document (for the average). */
  readonly #totalLengths = FIELDS.map(() => 0);

  get size(): number {
    return this.#slots.size;
  }

  has(id: string): boolean {
    return this.#slots.has(id);
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
      let posting = this.#posting(term);
      if (!posting) this.#postings.set(term, (posting = new Map()));
      posting.set(slot, packed);
    }
    lengths.forEach((length, f) => (this.#totalLengths[f]! += length));
    this.#entries[slot] = { id: document.id, kind: document.kind, lengths, terms: [...counts.keys()] };
    this.#slots.set(document.id, slot);
  }

  /** Removes a document; false when there was none with that id. */
  delete(id: string): boolean {
    const slot = this.#slots.get(id);
    if (slot === undefined) return false;
    const entry = this.#entries[slot]!;
    if (!entry.terms) this.#unpackAll();
    for (const term of entry.terms!) {
      const posting = this.#postings.get(term)!;
      posting.delete(slot);
      if (posting.size === 0) this.#postings.delete(term);
    }
    entry.lengths.forEach((length, f) => (this.#totalLengths[f]! -= length));
    this.#entries[slot] = undefined;
    this.#free.push(slot);
    this.#slots.delete(id);
    return true;
  }

  /** A term's postings, made from its packed run when the index was loaded and it was not needed yet. */
  #posting(term: string): Map<number, number> | undefined {
    const posting = this.#postings.get(term);
    if (posting || !this.#runs) return posting;
    const start = this.#runs.get(term);
    if (start === undefined) return undefined;
    this.#runs.delete(term);
    const packed = this.#packed!;
    const made = new Map<number, number>();
    for (let at = start + 1, end = start + 1 + 2 * packed[start]!; at < end; at += 2) made.set(packed[at]!, packed[at + 1]!);
    this.#postings.set(term, made);
    return made;
  }

  /** Every packed run made a Map, and every loaded document given its terms (before a loaded document is removed). */
  #unpackAll(): void {
    if (this.#runs) for (const term of [...this.#runs.keys()]) this.#posting(term);
    this.#runs = null;
    this.#packed = null;
    const terms = new Map<number, string[]>();
    this.#entries.forEach((entry, slot) => entry && !entry.terms && terms.set(slot, (entry.terms = [])));
    if (terms.size === 0) return;
    for (const [term, posting] of this.#postings) for (const slot of posting.keys()) terms.get(slot)?.push(term);
  }

  clear(): void {
    this.#entries.length = 0;
    this.#free.length = 0;
    this.#slots.clear();
    this.#postings.clear();
    this.#runs = null;
    this.#packed = null;
    this.#totalLengths.fill(0);
  }

  /**
   * The index as plain data (strings and typed arrays, cheap to store in IndexedDB), to be
   * loaded again with `RelevanceIndex.load`: the same documents, the same scores.
   */
  save(): IndexState {
    this.#unpackAll();
    const live: number[] = [];
    this.#entries.forEach((entry, slot) => entry && live.push(slot));
    const renumber = new Int32Array(this.#entries.length).fill(-1);
    live.forEach((slot, i) => (renumber[slot] = i));
    const lengths = new Uint32Array(live.length * FIELDS.length);
    live.forEach((slot, i) => lengths.set(this.#entries[slot]!.lengths, i * FIELDS.length));
    const terms: string[] = [];
    const counts = new Uint32Array(this.#postings.size);
    let total = 0;
    for (const [term, posting] of this.#postings) {
      counts[terms.length] = posting.size;
      terms.push(term);
      total += posting.size;
    }
    const postings = new Uint32Array(total * 2);
    let at = 0;
    for (const posting of this.#postings.values()) {
      for (const [slot, packed] of posting) {
        postings[at++] = renumber[slot]!;
        postings[at++] = packed;
      }
    }
    return {
      ids: live.map((slot) => this.#entries[slot]!.id),
      kinds: live.map((slot) => this.#entries[slot]!.kind),
      lengths,
      terms,
      counts,
      postings,
    };
  }

  /**
   * An index from what `save` gave. Cheap: a term's postings are made when it is first
   * searched or written, and a document's list of terms when one is first removed.
   */
  static load(state: IndexState): RelevanceIndex {
    const index = new RelevanceIndex();
    // One array of runs: each term's count, then its (slot, packed) pairs.
    const packed = new Uint32Array(state.terms.length + state.postings.length);
    const runs = new Map<string, number>();
    let from = 0;
    let to = 0;
    state.terms.forEach((term, t) => {
      const count = state.counts[t]!;
      runs.set(term, to);
      packed[to++] = count;
      packed.set(state.postings.subarray(from, from + 2 * count), to);
      from += 2 * count;
      to += 2 * count;
    });
    index.#runs = runs;
    index.#packed = packed;
    state.ids.forEach((id, slot) => {
      const lengths = Array.from(state.lengths.subarray(slot * FIELDS.length, (slot + 1) * FIELDS.length));
      lengths.forEach((length, f) => (index.#totalLengths[f]! += length));
      index.#entries.push({ id, kind: state.kinds[slot]!, lengths, terms: null });
      index.#slots.set(id, slot);
    });
    return index;
  }

  /** Documents matching the query, best first (ties by id), each with its BM25F score. */
  search(query: string, options: SearchOptions = {}): Hit[] {
    const n = this.#slots.size;
    if (n === 0) return [];
    const kinds = options.kinds ? new Set(options.kinds) : null;
    // Per field: its weight, and the two terms of its length normalisation.
    const weights = FIELDS.map((field) => WEIGHTS[field]);
    const fixed = FIELDS.map((field) => 1 - B[field]);
    const perLength = FIELDS.map((field, f) => B[field] / (this.#totalLengths[f]! / n || 1));
    const scores = new Float64Array(this.#entries.length);
    const touched: number[] = [];
    for (const term of new Set(tokenize(query))) {
      const posting = this.#posting(term);
      if (!posting) continue;
      const idf = Math.log(1 + (n - posting.size + 0.5) / (posting.size + 0.5));
      for (const [slot, packed] of posting) {
        const entry = this.#entries[slot]!;
        if (kinds && !kinds.has(entry.kind)) continue;
        if (options.ids && !options.ids.has(entry.id)) continue;
        let tf = 0;
        for (let f = 0; f < 4; f++) {
          const count = (packed >>> (8 * f)) & MAX_COUNT;
          if (count !== 0) tf += (weights[f]! * count) / (fixed[f]! + perLength[f]! * entry.lengths[f]!);
        }
        if (scores[slot] === 0) touched.push(slot);
        scores[slot]! += (idf * tf) / (K1 + tf);
      }
    }
    const hits: Hit[] = touched.map((slot) => {
      const entry = this.#entries[slot]!;
      return { id: entry.id, kind: entry.kind, score: scores[slot]! };
    });
    hits.sort(byScore);
    return options.limit === undefined ? hits : hits.slice(0, options.limit);
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
