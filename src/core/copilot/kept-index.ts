/**
 * The assets' relevance index as kept in the database (the `search` store): the index record,
 * `assets`, and the material of each document in its order but the texts, kept beside it in
 * chunks of TEXT_CHUNK documents (`assets:texts:0`, `assets:texts:1`…), each read when one of its
 * texts is first needed (a search's hits), so that a start reads the index alone. All carry the
 * same `stamp`; a record that does not hold together is not used (the index is built afresh).
 */
import type { Storage } from '../../storage/storage.js';
import type { IndexState } from '../relevance.js';
import type { Material } from './material.js';

/** Documents whose texts are kept in one record (about 256 KB of 1 KB snippets). */
export const TEXT_CHUNK = 256;

export interface KeptAssets {
  /** The database it was made from (`Storage.identity`): one kept in another (a wiped store) is not used. */
  identity: string;
  /** Made afresh each time the index is kept; its texts carry the same. */
  stamp: string;
  index: IndexState;
  names: string[];
  languages: string[];
  descriptions: Array<string | null>;
  /** How many chunks of texts. */
  textChunks: number;
}

/** The texts of a chunk of a kept index's documents, in its order. */
interface KeptTexts {
  stamp: string;
  /** Every document's text, joined (one string reads back faster than thousands), and where each ends. */
  texts: string;
  textEnds: Uint32Array;
}

/** The kept index of this database, with the change it reflects; undefined when there is none that holds together. */
export async function readKeptIndex(storage: Storage): Promise<{ kept: KeptAssets; seq: number } | undefined> {
  const [record, identity] = await Promise.all([storage.getSearchIndex('assets').catch(() => undefined), storage.identity()]);
  if (record && isKept(record.value) && record.value.identity === identity) return { kept: record.value, seq: record.seq };
  return undefined;
}

/** The first document of a chunk, and how many it holds. */
export function chunkRange(kept: KeptAssets, chunk: number): { from: number; count: number } {
  const from = chunk * TEXT_CHUNK;
  return { from, count: Math.min(TEXT_CHUNK, kept.index.ids.length - from) };
}

/**
 * The kept texts of a chunk's documents (the `i`th of the chunk by `textAt(i)`); undefined when the
 * chunk is missing or not of the index's stamp (a keep cut short).
 */
export async function readKeptTexts(storage: Storage, kept: KeptAssets, chunk: number): Promise<((i: number) => string) | undefined> {
  const record = await storage.getSearchIndex(`assets:texts:${chunk}`).catch(() => undefined);
  const value = record?.value;
  if (!isKeptTexts(value, kept.stamp, chunkRange(kept, chunk).count)) return undefined;
  return (i) => value.texts.slice(i ? value.textEnds[i - 1]! : 0, value.textEnds[i]!);
}

/**
 * Writes an index and the material of its documents (in its order) as of the change `seq`: the
 * texts first (a text is used only with an index of its own stamp), then chunks of an earlier,
 * larger keep (`keptChunks` of them) emptied, the index last. Returns how many chunks it holds.
 * Each record is one transaction.
 */
export async function writeKeptIndex(
  storage: Storage,
  { seq, index, materials, keptChunks }: { seq: number; index: IndexState; materials: Material[]; keptChunks: number },
): Promise<number> {
  const stamp = crypto.randomUUID();
  const textChunks = Math.ceil(materials.length / TEXT_CHUNK);
  const value: KeptAssets = {
    identity: await storage.identity(),
    stamp,
    index,
    names: materials.map((m) => m.name ?? ''),
    languages: materials.map((m) => m.language ?? 'txt'),
    descriptions: materials.map((m) => m.description ?? null),
    textChunks,
  };
  for (let chunk = 0; chunk < textChunks; chunk++) {
    const part = materials.slice(chunk * TEXT_CHUNK, (chunk + 1) * TEXT_CHUNK);
    let end = 0;
    const texts: KeptTexts = {
      stamp,
      texts: part.map((m) => m.text).join(''),
      textEnds: Uint32Array.from(part, (m) => (end += m.text.length)),
    };
    await storage.putSearchIndex(`assets:texts:${chunk}`, { seq, value: texts });
  }
  for (let chunk = textChunks; chunk < keptChunks; chunk++) await storage.putSearchIndex(`assets:texts:${chunk}`, { seq, value: null });
  await storage.putSearchIndex('assets', { seq, value });
  return textChunks;
}

/** A kept value of the right shape whose documents and materials agree (else the index is built afresh). */
function isKept(value: unknown): value is KeptAssets {
  const kept = value as KeptAssets | undefined;
  if (
    !kept ||
    typeof kept !== 'object' ||
    typeof kept.identity !== 'string' ||
    typeof kept.stamp !== 'string' ||
    !kept.index ||
    typeof kept.index !== 'object'
  )
    return false;
  const { index, names, languages, descriptions } = kept;
  const documents = Array.isArray(index.ids) ? index.ids.length : -1;
  return (
    documents >= 0 &&
    Array.isArray(index.kinds) &&
    Array.isArray(index.terms) &&
    index.lengths instanceof Uint32Array &&
    index.counts instanceof Uint32Array &&
    index.postings instanceof Uint32Array &&
    Array.isArray(names) &&
    names.length === documents &&
    Array.isArray(languages) &&
    languages.length === documents &&
    Array.isArray(descriptions) &&
    descriptions.length === documents &&
    kept.textChunks === Math.ceil(documents / TEXT_CHUNK)
  );
}

/** The texts kept with an index of that stamp, one per document, that add up. */
function isKeptTexts(value: unknown, stamp: string, documents: number): value is KeptTexts {
  const kept = value as KeptTexts | undefined;
  if (!kept || typeof kept !== 'object' || kept.stamp !== stamp || typeof kept.texts !== 'string') return false;
  const { texts, textEnds } = kept;
  if (!(textEnds instanceof Uint32Array) || textEnds.length !== documents) return false;
  if (documents === 0 ? texts.length !== 0 : textEnds[documents - 1] !== texts.length) return false;
  for (let i = 1; i < documents; i++) if (textEnds[i]! < textEnds[i - 1]!) return false;
  return true;
}
