/** `exportData()`: stored records as the data format. */
import type { AnnotationRecord, FormatRecord } from '../../storage/schema.js';
import type { StoredData } from '../../storage/storage.js';
import { toBase64 } from './fields.js';
import { type ConversationData, DATA_VERSION, type MaterialData, type MaterialsData, type PiecesData } from './format.js';

/** Stored records as the data format. */
export function toData(stored: StoredData): PiecesData {
  const formatsById = new Map(stored.formats.map((f) => [f.id, f]));
  const annotationsOf = new Map<string, AnnotationRecord[]>();
  for (const a of [...stored.annotations].sort((x, y) => (x.id < y.id ? -1 : 1))) {
    if (a.asset) annotationsOf.set(a.asset.id, [...(annotationsOf.get(a.asset.id) ?? []), a]);
  }
  // Stored by kind, each kind in creation order.
  const materials: MaterialsData = {};
  for (const { kind, value } of stored.materials ?? []) (materials[kind] ??= []).push(value as MaterialData);
  return {
    version: DATA_VERSION,
    // Stored records are what parseData and the handlers made: the shapes of the data format.
    conversations: stored.conversations.map(({ conversation, messages }) => ({
      ...(JSON.parse(conversation.json) as Omit<ConversationData, 'messages'>),
      messages: messages.map((m) => JSON.parse(m.json) as ConversationData['messages'][number]),
      ...(conversation.deletedMessageIds?.length ? { deletedMessages: conversation.deletedMessageIds } : {}),
    })),
    applications: stored.applications as PiecesData['applications'],
    sessions: stored.sessions,
    events: stored.events,
    assets: stored.assets.map((record) => ({
      ...record,
      formats: record.formats
        .map((id) => formatsById.get(id))
        .filter((f): f is FormatRecord => !!f)
        .map(({ asset: _asset, bytes, ...rest }) => ({ ...rest, ...(bytes ? { bytes: toBase64(bytes) } : {}) })),
      annotations: annotationsOf.get(record.id) ?? [],
    })),
    annotations: stored.annotations.filter((a) => !a.asset),
    tags: stored.tags,
    websites: stored.websites,
    activities: stored.activities,
    externalApplications: stored.external,
    anchors: stored.anchors.map((a) => JSON.parse(a.json) as PiecesData['anchors'][number]),
    models: stored.models,
    materials,
  };
}
