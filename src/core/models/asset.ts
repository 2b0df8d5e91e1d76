/** Assets: what a page adds to the store (the `addAssets` page API), and the SDK Asset records built from it. */
import type { Clock } from '../clock.js';
import type { AssetRecord } from '../../storage/schema.js';
import { array, object, optional, required, string, uuid, type JsonObject } from '../validate.js';
import { LANGUAGES } from './asset-summary.js';

export interface AssetInput {
  /** File name, e.g. `debounce.ts`; its extension gives the language unless `language` is set. */
  name: string;
  text: string;
  language?: string;
  description?: string;
  /** A UUID; one is assigned when absent. Adding an existing id replaces that asset. */
  id?: string;
}

export function parseAssets(value: unknown, clock: Clock): AssetRecord[] {
  const now = clock.now().toISOString();
  return array(value, 'assets').map((item, i) => {
    const path = `assets[${i}]`;
    const input = object(item, path);
    const name = required(input, 'name', path, string);
    const extension = /\.([A-Za-z0-9+#]+)$/.exec(name)?.[1]?.toLowerCase() ?? 'txt';
    const description = optional(input, 'description', path, string);
    return {
      id: optional(input, 'id', path, uuid) ?? clock.newId(),
      name,
      text: required(input, 'text', path, string),
      language: optional(input, 'language', path, string) ?? extension,
      created: now,
      formatId: clock.newId(),
      ...(description === undefined ? {} : { description }),
    };
  });
}

/** The application that creates the service's own records (formats of added assets). */
export const SERVICE_APPLICATION = {
  id: 'a0b1c2d3-0000-4000-8000-00000000c0de',
  name: 'OS_SERVER',
  version: '1',
  platform: 'WEB',
  onboarded: true,
  privacy: 'OPEN',
  capabilities: 'LOCAL',
  mechanism: 'INTERNAL',
} as const;

/** A stable UUID-shaped id derived from a seed (FNV-1a, four lanes): for records that are views of a stored one. */
export function derivedId(seed: string): string {
  let hex = '';
  for (let lane = 0; lane < 4; lane++) {
    let h = 0x811c9dc5 ^ lane;
    for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 0x01000193);
    hex += (h >>> 0).toString(16).padStart(8, '0');
  }
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const readableSize = (bytes: number) =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/**
 * The SDK Asset for a stored asset: one format (its original and preview)
 * holding the text as a fragment (without the text when `transferables` is
 * false), and the description as a DESCRIPTION annotation.
 */
export function assetWire(asset: AssetRecord, transferables: boolean): JsonObject {
  const stamp = { value: asset.created };
  const creator = SERVICE_APPLICATION.id;
  const bytes = new TextEncoder().encode(asset.text).byteLength;
  const flattenedAsset = {
    id: asset.id,
    name: asset.name,
    creator,
    created: stamp,
    updated: stamp,
    formats: { iterable: [{ id: asset.formatId }] },
    preview: { base: asset.formatId },
    original: asset.formatId,
    mechanism: 'MANUAL',
  };
  const format = {
    id: asset.formatId,
    creator,
    classification: { generic: 'CODE', specific: asset.language in LANGUAGES ? asset.language : 'txt' },
    role: 'BOTH',
    application: SERVICE_APPLICATION,
    asset: flattenedAsset,
    bytes: { value: bytes, readable: readableSize(bytes) },
    created: stamp,
    updated: stamp,
    ...(transferables ? { fragment: { string: { raw: asset.text } } } : {}),
  };
  const reference = { id: asset.formatId, reference: { ...format, asset: asset.id } };
  return {
    id: asset.id,
    name: asset.name,
    creator,
    created: stamp,
    updated: stamp,
    formats: { iterable: [format] },
    preview: { base: reference },
    original: reference,
    mechanism: 'MANUAL',
    ...(asset.description
      ? {
          annotations: {
            iterable: [
              { id: derivedId(`description:${asset.id}`), created: stamp, updated: stamp, type: 'DESCRIPTION', text: asset.description, asset: { id: asset.id } },
            ],
          },
        }
      : {}),
  };
}
