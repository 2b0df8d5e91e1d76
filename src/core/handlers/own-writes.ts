/**
 * Writes of the hand-written kinds beyond their creates and associations: an anchor updated
 * (AnchorApi.anchorUpdate: its name and `watch`) or renamed from its path (anchorRename), every
 * application's processing capabilities at once (ApplicationsApi's bulk update), a conversation
 * prepared for the copilot (ConversationApi's prepare: read, nothing to change here), and the
 * stores of what no host here makes (RelationshipsApi: relationships are Pieces OS's embeddings
 * between formats, which no host of this service computes).
 */
import type { OperationContext } from '../context.js';
import { badRequest, notFound, readJson, reply } from '../http.js';
import { CapabilitiesEnum } from '../enums.js';
import { anchorConversations, withAnchor } from '../models/anchor.js';
import type { AnchorRecord } from '../../storage/storage.js';
import { boolean, knownKeys, object, oneOf, optional, required, storedJson, string, uuid, type JsonObject } from '../validate.js';
import { applicationsSnapshot } from './applications.js';
import { clock, publish, transferables } from './common.js';

/** The Anchor model's fields (what an update may send: the stored one's fields are kept but `name` and `watch`). */
const ANCHOR_FIELDS = [
  'schema',
  'id',
  'name',
  'type',
  'watch',
  'points',
  'created',
  'updated',
  'deleted',
  'assets',
  'annotations',
  'conversations',
  'score',
  'summaries',
  'persons',
  'messages',
  'workstreamEvents',
  'sources',
  'tags',
] as const;

/** Writes an anchor changed by `change` (undefined: nothing to change), with the reference every conversation listing it holds. */
async function editAnchor(context: OperationContext, id: string, change: (anchor: JsonObject) => JsonObject | undefined) {
  const time = clock(context);
  let answer: string | undefined;
  const changes = await context.service.storage.editAnchor(
    id,
    (current) => ({ conversations: current ? anchorConversations(current) : [] }),
    (current, found) => {
      if (!current) throw notFound(`No anchor with id ${id}.`);
      const anchor = JSON.parse(current.json) as JsonObject;
      const changed = change(anchor);
      answer = current.json;
      if (!changed) return undefined;
      const next = { ...changed, updated: { value: time.now().toISOString() } };
      const record: AnchorRecord = { ...current, json: storedJson(next) };
      answer = record.json;
      return { anchor: record, conversations: [...found.conversations.values()].map((c) => withAnchor(c, next, time)) };
    },
  );
  publish(context, changes);
  return reply(answer);
}

/** anchorUpdate: an Anchor whose `name` and `watch` are taken (its points, type and lists are the store's); answers the Anchor. */
export async function anchorUpdate(context: OperationContext) {
  transferables(context.url);
  const path = 'anchor';
  const body = object(await readJson(context.request, context.service.maxBodyBytes), path);
  knownKeys(body, ANCHOR_FIELDS, path, 'Anchor');
  const id = required(body, 'id', path, uuid);
  const name = optional(body, 'name', path, string);
  const watch = optional(body, 'watch', path, boolean);
  return editAnchor(context, id, (anchor) => {
    if ((name === undefined || name === anchor.name) && (watch === undefined || watch === anchor.watch)) return undefined;
    return { ...anchor, ...(name !== undefined ? { name } : {}), ...(watch !== undefined ? { watch } : {}) };
  });
}

/** anchorRename: the anchor named after its path (the last segment of its first point's path); answers the Anchor. */
export async function anchorRename(context: OperationContext) {
  transferables(context.url);
  const id = uuid(context.params.anchor, 'The anchor id');
  return editAnchor(context, id, (anchor) => {
    const point = (anchor.points as { iterable?: Array<{ reference?: { fullpath?: unknown } }> } | undefined)?.iterable?.[0];
    const fullpath = typeof point?.reference?.fullpath === 'string' ? point.reference.fullpath : '';
    const name = fullpath.split(/[\\/]/).filter(Boolean).pop();
    return name === undefined || name === anchor.name ? undefined : { ...anchor, name };
  });
}

/**
 * applicationsBulkUpdateApplicationCapabilities: every registered application processes with the
 * capabilities given (each written and announced as an application update); answers the
 * applications. The OS's own entry stays LOCAL: this host processes locally, whatever is asked.
 */
export async function applicationsBulkUpdateApplicationCapabilities(context: OperationContext) {
  const path = 'applicationsBulkUpdateCapabilitiesInput';
  const body = object(await readJson(context.request, context.service.maxBodyBytes), path);
  knownKeys(body, ['schema', 'capabilities'], path, 'ApplicationsBulkUpdateCapabilitiesInput');
  const capabilities = required(body, 'capabilities', path, (v, p) => oneOf(v, CapabilitiesEnum, p));
  const { storage } = context.service;
  for (const { application } of await storage.listApplications())
    if (application.capabilities !== capabilities) publish(context, await storage.putApplication({ ...application, capabilities }));
  // The snapshot, as applicationsSnapshot answers it (the OS's entry first).
  return applicationsSnapshot(context);
}

/** conversationSpecificConversationPrepare: the conversation is read (404 when it is not stored); the copilot here needs nothing prepared. */
export async function conversationSpecificConversationPrepare(context: OperationContext) {
  const id = uuid(context.params.conversation, 'The conversation id');
  if (!(await context.service.storage.getConversation(id))) throw notFound(`No conversation with id ${id}.`);
  return reply();
}

/** relationshipsSnapshot: none, and truly so (see the top of this file). */
export async function relationshipsSnapshot() {
  return reply({ iterable: [] });
}

/** relationshipsSpecificRelationshipSnapshot: 404 naming it, as no relationship is ever made here. */
export async function relationshipsSpecificRelationshipSnapshot(context: OperationContext): Promise<Response> {
  const id = context.params.relationship ?? '';
  if (!id.trim()) throw badRequest('The relationship id is required.');
  throw notFound(`No relationship with id ${id}: relationships are embeddings between formats, which no host of this service computes.`);
}
