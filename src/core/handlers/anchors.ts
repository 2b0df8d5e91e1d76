/**
 * Handlers of AnchorsApi and AnchorApi (anchors: created on their own or with
 * a conversation, the same records either way), and of RangesApi and RangeApi
 * (ranges: nothing here creates one, so there are none to read).
 */
import type { OperationContext } from '../context.js';
import { badRequest, jsonText, noContent, notFound, readJson } from '../http.js';
import { anchorConversations, anchorRecord, anchorsJson, parseSeededAnchor, withAnchor, withoutAnchor } from '../models/anchor.js';
import { uuid } from '../validate.js';
import { clock, publish, transferables } from './common.js';

const anchorId = (context: OperationContext) => uuid(context.params.anchor, 'The anchor id');

/** anchorsCreateNewAnchor: a SeededAnchor becomes an Anchor (with its point), listed by the conversation it names. */
export async function anchorsCreateNewAnchor(context: OperationContext) {
  transferables(context.url);
  const { service } = context;
  const body = await readJson(context.request, service.maxBodyBytes);
  if (body === undefined) throw badRequest('The request body is required: send a SeededAnchor ({"type":"FILE","fullpath":"/path"}).');
  const time = clock(context);
  const { anchor, conversation, asset } = parseSeededAnchor(body, time);
  if (asset !== undefined && !(await service.storage.getAsset(asset))) throw notFound(`No asset with id ${asset} (seededAnchor.asset).`);
  const record = anchorRecord(anchor);
  const changes = await service.storage.editAnchor(
    record.id,
    () => (conversation ? [conversation] : []),
    (_current, conversations) => {
      const owner = conversation === undefined ? undefined : conversations.get(conversation);
      if (conversation !== undefined && !owner) throw notFound(`No conversation with id ${conversation} (seededAnchor.conversation).`);
      return { anchor: record, conversations: owner ? [withAnchor(owner, anchor, time)] : [] };
    },
  );
  publish(context, changes);
  return jsonText(record.json);
}

export async function anchorsSnapshot(context: OperationContext) {
  transferables(context.url);
  return jsonText(anchorsJson(await context.service.storage.listAnchors()));
}

/** anchorSpecificAnchorSnapshot: one anchor, with its points. */
export async function anchorSpecificAnchorSnapshot(context: OperationContext) {
  transferables(context.url);
  const id = anchorId(context);
  const record = await context.service.storage.getAnchor(id);
  if (!record) throw notFound(`No anchor with id ${id}.`);
  return jsonText(record.json);
}

/** anchorsDeleteSpecificAnchor: the anchor goes, and the conversations that listed it no longer do. */
export async function anchorsDeleteSpecificAnchor(context: OperationContext) {
  const id = anchorId(context);
  const time = clock(context);
  const changes = await context.service.storage.editAnchor(
    id,
    (current) => (current ? anchorConversations(current) : []),
    (current, conversations) => {
      if (!current) throw notFound(`No anchor with id ${id}.`);
      return { anchor: null, conversations: [...conversations.values()].map((record) => withoutAnchor(record, id, time)) };
    },
  );
  publish(context, changes);
  return noContent();
}

/** rangesSnapshot: no range is ever created here. */
export async function rangesSnapshot() {
  return jsonText('{"iterable":[]}');
}

/** rangesSpecificRangeSnapshot: a 404 that names the range (none exists here). */
export async function rangesSpecificRangeSnapshot(context: OperationContext): Promise<Response> {
  const id = uuid(context.params.range, 'The range id');
  throw notFound(`No range with id ${id}: this service creates no ranges (they come from long-term memory, which is off).`);
}
