/**
 * Handlers of AnchorsApi and AnchorApi (anchors: created on their own or with
 * a conversation, the same records either way; associated with conversations
 * and assets from either side). (Ranges are the generic path's: handlers/materials.ts.)
 */
import type { OperationContext } from '../context.js';
import { badRequest, notFound, readJson, reply } from '../http.js';
import {
  anchorAssets,
  anchorConversations,
  anchorLists,
  anchorRecord,
  anchorRelinked,
  anchorsJson,
  assetRelinked,
  conversationListsAnchor,
  parseSeededAnchor,
  withAnchor,
  withoutAnchor,
} from '../models/anchor.js';
import { uuid, type JsonObject } from '../validate.js';
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
  const record = anchorRecord(anchor);
  const changes = await service.storage.editAnchor(
    record.id,
    () => ({ conversations: conversation ? [conversation] : [], assets: asset ? [asset] : [] }),
    (_current, found) => {
      const owner = conversation === undefined ? undefined : found.conversations.get(conversation);
      if (conversation !== undefined && !owner) throw notFound(`No conversation with id ${conversation} (seededAnchor.conversation).`);
      const listing = asset === undefined ? undefined : found.assets.get(asset);
      if (asset !== undefined && !listing) throw notFound(`No asset with id ${asset} (seededAnchor.asset).`);
      return {
        anchor: record,
        conversations: owner ? [withAnchor(owner, anchor, time)] : [],
        assets: listing ? [assetRelinked(listing, record.id, true, time)] : [],
      };
    },
  );
  publish(context, changes);
  return reply(record.json);
}

export async function anchorsSnapshot(context: OperationContext) {
  transferables(context.url);
  return reply(anchorsJson(await context.service.storage.listAnchors()));
}

/** anchorSpecificAnchorSnapshot: one anchor, with its points. */
export async function anchorSpecificAnchorSnapshot(context: OperationContext) {
  transferables(context.url);
  const id = anchorId(context);
  const record = await context.service.storage.getAnchor(id);
  if (!record) throw notFound(`No anchor with id ${id}.`);
  return reply(record.json);
}

/** anchorsDeleteSpecificAnchor: the anchor goes, and the conversations and assets that listed it no longer do. */
export async function anchorsDeleteSpecificAnchor(context: OperationContext) {
  const id = anchorId(context);
  const time = clock(context);
  const changes = await context.service.storage.editAnchor(
    id,
    (current) => (current ? { conversations: anchorConversations(current), assets: anchorAssets(current) } : {}),
    (current, found) => {
      if (!current) throw notFound(`No anchor with id ${id}.`);
      return {
        anchor: null,
        conversations: [...found.conversations.values()].map((record) => withoutAnchor(record, id, time)),
        assets: [...found.assets.values()].map((record) => assetRelinked(record, id, false, time)),
      };
    },
  );
  publish(context, changes);
  return reply();
}

/**
 * Associates an anchor with a conversation or an asset (or undoes it), from either side: the
 * anchor lists the record in its `conversations` (`assets`), and the conversation lists the
 * anchor in its `anchors` (the asset in its `anchors`), written in one transaction. Associating
 * what is associated, or disassociating what is not, changes nothing (204 all the same); an
 * unknown anchor, conversation or asset is a 404 naming it.
 */
async function relate(context: OperationContext, kind: 'conversation' | 'asset', linked: boolean): Promise<Response> {
  const id = anchorId(context);
  const otherId = uuid(context.params[kind], `The ${kind} id`);
  const time = clock(context);
  const list = kind === 'conversation' ? 'conversations' : 'assets';
  const changes = await context.service.storage.editAnchor(
    id,
    () => (kind === 'conversation' ? { conversations: [otherId] } : { assets: [otherId] }),
    (current, found) => {
      if (!current) throw notFound(`No anchor with id ${id}.`);
      const conversation = found.conversations.get(otherId);
      const asset = found.assets.get(otherId);
      if (!conversation && !asset) throw notFound(`No ${kind} with id ${otherId}.`);
      // Nothing to do only when both sides agree already (one side alone is made to agree with the other).
      const there = conversation ? conversationListsAnchor(conversation, id) : (asset!.anchors ?? []).includes(id);
      if (anchorLists(current, list, otherId) === linked && there === linked) return undefined;
      const anchor = anchorRelinked(current, list, otherId, linked);
      if (conversation) {
        const wire = JSON.parse(anchor.json) as JsonObject;
        return { anchor, conversations: [linked ? withAnchor(conversation, wire, time) : withoutAnchor(conversation, id, time)] };
      }
      return { anchor, assets: [assetRelinked(asset!, id, linked, time)] };
    },
  );
  publish(context, changes);
  return reply();
}

export const anchorAssociateConversation = (context: OperationContext) => relate(context, 'conversation', true);
export const anchorDisassociateConversation = (context: OperationContext) => relate(context, 'conversation', false);
export const anchorAssociateAsset = (context: OperationContext) => relate(context, 'asset', true);
export const anchorDisassociateAsset = (context: OperationContext) => relate(context, 'asset', false);
/** ConversationApi.conversationAssociateAnchor and AssetApi.assetAssociateAnchor (and the disassociations): the same writes. */
export const conversationAssociateAnchor = anchorAssociateConversation;
export const conversationDisassociateAnchor = anchorDisassociateConversation;
export const assetAssociateAnchor = anchorAssociateAsset;
export const assetDisassociateAnchor = anchorDisassociateAsset;
