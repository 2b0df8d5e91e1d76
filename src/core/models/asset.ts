/** Assets a page adds to the store (the `addAssets` page API). */
import type { AssetRecord } from '../../storage/schema.js';
import { array, object, optional, required, string, uuid } from '../validate.js';

export interface AssetInput {
  /** File name, e.g. `debounce.ts`; its extension gives the language unless `language` is set. */
  name: string;
  text: string;
  language?: string;
  description?: string;
  /** A UUID; one is assigned when absent. Adding an existing id replaces that asset. */
  id?: string;
}

export function parseAssets(value: unknown, newId: () => string, now: string): AssetRecord[] {
  return array(value, 'assets').map((item, i) => {
    const path = `assets[${i}]`;
    const input = object(item, path);
    const name = required(input, 'name', path, string);
    const extension = /\.([A-Za-z0-9+#]+)$/.exec(name)?.[1]?.toLowerCase() ?? 'txt';
    const description = optional(input, 'description', path, string);
    return {
      id: optional(input, 'id', path, uuid) ?? newId(),
      name,
      text: required(input, 'text', path, string),
      language: optional(input, 'language', path, string) ?? extension,
      created: now,
      ...(description === undefined ? {} : { description }),
    };
  });
}
