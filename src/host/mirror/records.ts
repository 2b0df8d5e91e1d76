/**
 * The upstream's records as this service stores them: a wire Conversation (read with
 * `transferables=true`, its messages' references inline), an Application, an Asset. The
 * upstream is trusted as a Pieces OS is: its JSON is kept as it sent it (nulls dropped, as
 * the service stores JSON), not validated as a client's body is.
 */
import { conversationMessageIds } from '../../core/mirror-spec.js';
import { storedJson } from '../../core/validate.js';
import type { ApplicationRecord, AssetRecord, MessageRecord } from '../../storage/schema.js';
import type { StoredData } from '../../storage/storage.js';

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const idOf = (value: unknown) => (isRecord(value) && typeof value.id === 'string' ? value.id : undefined);

export type StoredConversation = StoredData['conversations'][number];

/** A wire Conversation as a stored conversation and its messages; undefined when it is not one. */
export function conversationRecord(wire: unknown): StoredConversation | undefined {
  const id = idOf(wire);
  if (!id || !isRecord(wire)) return undefined;
  const { messages: listed, ...rest } = wire;
  const items = isRecord(listed) && Array.isArray(listed.iterable) ? (listed.iterable as unknown[]) : [];
  const indices = isRecord(listed) && isRecord(listed.indices) ? (listed.indices as Record<string, number>) : {};
  const references = new Map(items.filter(isRecord).map((item) => [item.id, item.reference]));
  const messageIds = conversationMessageIds(wire);
  const messages: MessageRecord[] = [];
  for (const messageId of messageIds) {
    const reference = references.get(messageId);
    if (isRecord(reference)) messages.push({ id: messageId, conversation: id, json: storedJson({ ...reference, id: messageId, conversation: { id } }) });
  }
  const deletedMessageIds = Object.keys(indices).filter((key) => indices[key] === -1);
  return {
    conversation: {
      id,
      json: storedJson(rest),
      messageIds: messages.map((m) => m.id),
      ...(deletedMessageIds.length ? { deletedMessageIds } : {}),
    },
    messages,
  };
}

/** Whether a wire Conversation lists its messages with their references (read with `transferables=true`). */
export function conversationMessagesListed(wire: unknown): boolean {
  const listed = isRecord(wire) && isRecord(wire.messages) && Array.isArray(wire.messages.iterable) ? (wire.messages.iterable as unknown[]) : [];
  return listed.every((item) => isRecord(item) && isRecord(item.reference));
}

/** A wire Application as stored (the engagement figures this service derives are not part of it). */
export function applicationRecord(wire: unknown): ApplicationRecord | undefined {
  const id = idOf(wire);
  if (!id || !isRecord(wire)) return undefined;
  const { engagement: _engagement, ...application } = wire;
  return JSON.parse(storedJson(application)) as ApplicationRecord;
}

/** A wire Asset as stored: its name, its original format's text, language and id, its description annotation. */
export function assetRecord(wire: unknown): AssetRecord | undefined {
  const id = idOf(wire);
  if (!id || !isRecord(wire)) return undefined;
  const original = isRecord(wire.original) ? wire.original : {};
  const format = isRecord(original.reference) ? original.reference : original;
  const classification = isRecord(format.classification) ? format.classification : {};
  const fragment = isRecord(format.fragment) && isRecord(format.fragment.string) ? format.fragment.string : {};
  const created = isRecord(wire.created) && typeof wire.created.value === 'string' ? wire.created.value : new Date(0).toISOString();
  const annotations = isRecord(wire.annotations) && Array.isArray(wire.annotations.iterable) ? wire.annotations.iterable : [];
  const description = annotations.find((a: unknown) => isRecord(a) && a.type === 'DESCRIPTION' && typeof a.text === 'string') as Json | undefined;
  return {
    id,
    name: typeof wire.name === 'string' ? wire.name : 'Untitled',
    language: typeof classification.specific === 'string' ? classification.specific : 'txt',
    text: typeof fragment.raw === 'string' ? fragment.raw : '',
    created,
    formatId: idOf(format) ?? id,
    ...(description ? { description: description.text as string } : {}),
  };
}

/** The items of a list answer that convert. */
export function records<T>(answer: unknown, convert: (wire: unknown) => T | undefined): T[] {
  const items = isRecord(answer) && Array.isArray(answer.iterable) ? answer.iterable : [];
  return items.map(convert).filter((record): record is T => record !== undefined);
}
