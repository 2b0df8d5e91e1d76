/** What the copilot ranks: a stored asset or conversation message as material, and its indexed fields. */
import type { MessageRecord } from '../../storage/schema.js';
import type { StoredAsset } from '../../storage/storage.js';
import { assetMaterialOf } from '../models/asset.js';
import type { Field } from '../relevance.js';

export interface Material {
  id: string;
  kind: 'asset' | 'message';
  /** Asset file name. */
  name?: string;
  language?: string;
  description?: string;
  text: string;
  /** For a message: its role and its conversation. */
  role?: string;
  conversation?: string;
}

export interface Ranked extends Material {
  score: number;
}

export function assetMaterial(asset: StoredAsset): Material {
  return { ...assetMaterialOf(asset), kind: 'asset' };
}

/** A stored message as material, or null when it has no text. */
export function messageMaterial(record: MessageRecord): Material | null {
  const message = JSON.parse(record.json) as { role?: string; fragment?: { string?: { raw?: string } } };
  const text = message.fragment?.string?.raw;
  if (!text) return null;
  return { id: record.id, kind: 'message', text, role: message.role ?? 'UNKNOWN', conversation: record.conversation };
}

/** The fields of material the relevance index reads. */
export function materialFields(material: Material): Partial<Record<Field, string>> {
  return {
    text: material.text,
    ...(material.name ? { name: material.name } : {}),
    ...(material.language ? { language: material.language } : {}),
    ...(material.description ? { description: material.description } : {}),
  };
}
