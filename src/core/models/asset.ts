/**
 * Assets, one module per concern, exported together from here (where every importer reads them):
 * making records (`asset-records.ts`: AssetInput, `addAssets`), seeds (`asset-seed.ts`: a Seed
 * made into records, the draft's Seed), changes (`asset-update.ts`: assets, formats, annotations),
 * activities (`activity.ts`), the SDK models (`asset-wire.ts`: Asset, Format, FlattenedAsset,
 * Annotation, Tag, Website) and what search reads (`asset-material.ts`).
 */
export { assetFromInput, parseAssets, type AssetInput } from './asset-records.js';
export { draftWire, parseSeed } from './asset-seed.js';
export { parseFormatValue, parseNewAnnotation, updateAnnotation, updateAsset, updatedAssetId, withValue } from './asset-update.js';
export { activity, activityWire } from './activity.js';
export { annotationWire, assetWire, formatWire, tagWire, websiteWire } from './asset-wire.js';
export { assetMaterialOf, summaryInput } from './asset-material.js';
