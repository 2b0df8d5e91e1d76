/** What relevance, search and a conversation's summary read of an asset. */
import type { StoredAsset } from '../../storage/storage.js';

/** Most text of one asset the search index reads (the rest is stored and served, not indexed). */
export const INDEXED_TEXT_LIMIT = 1024 * 1024;

/** What relevance and search read of an asset: its name, language, description and (at most INDEXED_TEXT_LIMIT of) its text. */
export function assetMaterialOf(whole: StoredAsset) {
  const preview =
    whole.formats.find((f) => f.id === whole.record.preview && f.text !== undefined) ?? whole.formats.find((f) => f.text !== undefined);
  const original = whole.formats.find((f) => f.id === whole.record.original) ?? whole.formats[0];
  const text = preview?.text ?? '';
  const description = whole.annotations
    .filter((a) => a.type === 'DESCRIPTION')
    .map((a) => a.text)
    .join('\n');
  return {
    id: whole.record.id,
    name: whole.record.name,
    language: original?.classification.specific ?? 'txt',
    text: text.length > INDEXED_TEXT_LIMIT ? text.slice(0, INDEXED_TEXT_LIMIT) : text,
    ...(description ? { description } : {}),
  };
}

/** What the summary of a conversation made from an asset reads. */
export function summaryInput(whole: StoredAsset) {
  const material = assetMaterialOf(whole);
  const preview =
    whole.formats.find((f) => f.id === whole.record.preview && f.text !== undefined) ?? whole.formats.find((f) => f.text !== undefined);
  return {
    name: material.name,
    language: material.language,
    text: preview?.text ?? '',
    ...(material.description ? { description: material.description } : {}),
  };
}
