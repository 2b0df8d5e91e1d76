/**
 * Long-term memory's index as kept in the database (the `search` store's `ltm` record), compact:
 * a few large typed arrays and joined strings rather than hundreds of thousands of values, and the
 * postings as variable-length bytes (about 3 bytes a pair instead of 8), so that a start reads a
 * record of a few megabytes for 100,000 events. `pack` makes it of an index and what ranking
 * needs of each document; `unpack` gives them back, or undefined when it does not hold together
 * (then everything is read and indexed afresh).
 */
import type { IndexState } from '../relevance.js';
import type { DocumentMeta } from './document.js';

type Kind = DocumentMeta['kind'];
const KINDS: readonly Kind[] = ['workstreamSummary', 'workstreamEvent'];

export interface KeptMemory {
  identity: string;
  /** The documents' keys (`kind/id`), joined by newlines, in the index's order. */
  ids: string;
  /** Each document's kind: its place in KINDS. */
  kinds: Uint8Array;
  lengths: Uint32Array;
  /** The index's terms (words: no newline in them), joined by newlines. */
  terms: string;
  counts: Uint32Array;
  /** The postings' pairs, each as two unsigned LEB128 numbers: the document's place after the previous pair's (zigzag), the field counts rotated so that the body's come first. */
  postings: Uint8Array;
  /** How many pairs. */
  pairs: number;
  at: Float64Array;
  /** Each document's applications joined by newlines, the documents' joined by NUL. */
  applications: string;
}

/** Field counts rotated so that the body text's (the highest byte) comes lowest: most pairs then take one byte. */
const rotate = (packed: number) => ((packed << 8) | (packed >>> 24)) >>> 0;
const unrotate = (value: number) => ((value >>> 8) | (value << 24)) >>> 0;

function writeVarint(out: number[], value: number) {
  let v = value >>> 0;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
}

export function pack(identity: string, index: IndexState, metas: readonly DocumentMeta[]): KeptMemory {
  const bytes: number[] = [];
  const chunks: Uint8Array[] = [];
  let total = 0;
  let previous = 0;
  for (let i = 0; i < index.postings.length; i += 2) {
    const slot = index.postings[i]!;
    const delta = slot - previous;
    previous = slot;
    writeVarint(bytes, delta >= 0 ? delta * 2 : -delta * 2 - 1);
    writeVarint(bytes, rotate(index.postings[i + 1]!));
    if (bytes.length > 1 << 16) {
      chunks.push(Uint8Array.from(bytes));
      total += bytes.length;
      bytes.length = 0;
    }
  }
  chunks.push(Uint8Array.from(bytes));
  total += bytes.length;
  const postings = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    postings.set(chunk, at);
    at += chunk.length;
  }
  return {
    identity,
    ids: index.ids.join('\n'),
    kinds: Uint8Array.from(index.kinds, (kind) => KINDS.indexOf(kind as Kind)),
    lengths: index.lengths,
    terms: index.terms.join('\n'),
    counts: index.counts,
    postings,
    pairs: index.postings.length / 2,
    at: Float64Array.from(metas, (meta) => meta.at),
    applications: metas.map((meta) => meta.applications?.join('\n') ?? '').join('\u0000'),
  };
}

const isKept = (value: unknown): value is KeptMemory => {
  const kept = value as KeptMemory | undefined;
  return (
    typeof kept === 'object' &&
    kept !== null &&
    typeof kept.identity === 'string' &&
    typeof kept.ids === 'string' &&
    kept.kinds instanceof Uint8Array &&
    kept.lengths instanceof Uint32Array &&
    typeof kept.terms === 'string' &&
    kept.counts instanceof Uint32Array &&
    kept.postings instanceof Uint8Array &&
    Number.isInteger(kept.pairs) &&
    kept.at instanceof Float64Array &&
    typeof kept.applications === 'string'
  );
};

/** The index (keys `kind/id`) and each document's meta, in its order; undefined when the kept value does not hold together. */
export function unpack(value: unknown, identity: string): { index: IndexState; metas: DocumentMeta[] } | undefined {
  if (!isKept(value) || value.identity !== identity) return undefined;
  const documents = value.kinds.length;
  const ids = documents ? value.ids.split('\n') : [];
  const applications = documents ? value.applications.split('\u0000') : [];
  const terms = value.counts.length ? value.terms.split('\n') : [];
  if (
    ids.length !== documents ||
    applications.length !== documents ||
    value.at.length !== documents ||
    terms.length !== value.counts.length
  )
    return undefined;
  const postings = new Uint32Array(value.pairs * 2);
  const bytes = value.postings;
  // One tight loop (4 million pairs for 100,000 events): a byte past the end reads as 0 and ends a
  // number, so the one check of the end is at the end.
  let at = 0;
  let previous = 0;
  for (let i = 0; i < postings.length; i++) {
    let byte = bytes[at++]!;
    let number = byte & 0x7f;
    if (byte & 0x80) {
      byte = bytes[at++]!;
      number |= (byte & 0x7f) << 7;
      if (byte & 0x80) {
        byte = bytes[at++]!;
        number |= (byte & 0x7f) << 14;
        if (byte & 0x80) {
          byte = bytes[at++]!;
          number |= (byte & 0x7f) << 21;
          if (byte & 0x80) number = (number >>> 0) + (bytes[at++]! & 0x0f) * 0x10000000;
        }
      }
    }
    if (i % 2 === 0) {
      previous += number % 2 ? -(number + 1) / 2 : number / 2;
      postings[i] = previous;
    } else {
      postings[i] = unrotate(number);
    }
  }
  if (at !== bytes.length) return undefined;
  const kinds: Kind[] = [];
  const metas: DocumentMeta[] = [];
  /** Documents of the same applications share one list (a handful of lists for 100,000 events). */
  const shared = new Map<string, string[]>();
  for (let i = 0; i < documents; i++) {
    const kind = KINDS[value.kinds[i]!];
    if (!kind) return undefined;
    kinds.push(kind);
    const names = applications[i]!;
    let listed = shared.get(names);
    if (!listed) shared.set(names, (listed = names.split('\n')));
    metas.push(names ? { kind, at: value.at[i]!, applications: listed } : { kind, at: value.at[i]! });
  }
  return { index: { ids, kinds, lengths: value.lengths, terms, counts: value.counts, postings }, metas };
}
