/**
 * Long-term memory's index as kept in the database (the `search` store's `ltm` record), compact:
 * a few large typed arrays and joined strings rather than hundreds of thousands of values, and the
 * postings as variable-length bytes (about 3 bytes a pair instead of 8), so that a start reads a
 * record of a few megabytes for 100,000 events. `pack` makes it of an index and what ranking
 * needs of each document; `unpack` gives them back, or undefined when it does not hold together
 * (then everything is read and indexed afresh).
 */
import type { IndexState } from '../relevance.js';
import type { DocumentMeta } from './memory.js';

type Kind = DocumentMeta['kind'];
const KINDS: readonly Kind[] = ['workstreamSummary', 'workstreamEvent'];

export interface KeptMemory {
  identity: string;
  /** The documents' ids (without their kind), joined by newlines, in the index's order. */
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
    ids: index.ids.map((key) => key.slice(key.indexOf('/') + 1)).join('\n'),
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
  let at = 0;
  let previous = 0;
  const read = () => {
    let result = 0;
    let shift = 0;
    let byte: number;
    do {
      if (at >= bytes.length || shift > 28) throw new Error('The kept memory index is cut short.');
      byte = bytes[at++]!;
      result += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return result;
  };
  try {
    for (let i = 0; i < postings.length; i += 2) {
      const zigzag = read();
      previous += zigzag % 2 ? -(zigzag + 1) / 2 : zigzag / 2;
      postings[i] = previous;
      postings[i + 1] = unrotate(read());
    }
  } catch {
    return undefined;
  }
  if (at !== bytes.length) return undefined;
  const kinds: string[] = [];
  const metas: DocumentMeta[] = [];
  const keys: string[] = [];
  for (let i = 0; i < documents; i++) {
    const kind = KINDS[value.kinds[i]!];
    if (!kind) return undefined;
    kinds.push(kind);
    keys.push(`${kind}/${ids[i]}`);
    const names = applications[i]!;
    metas.push({ kind, at: value.at[i]!, ...(names ? { applications: names.split('\n') } : {}) });
  }
  return { index: { ids: keys, kinds, lengths: value.lengths, terms, counts: value.counts, postings }, metas };
}
