/**
 * The score increments of the kinds with a hand-written store (AssetApi, ConversationApi,
 * ConversationMessageApi, AnchorApi, AnnotationApi `…ScoresIncrement`): the Score counts a
 * SeededScoreIncrement names `true` go up by one on the record, which shows them in its `score`
 * from then on (the generic kinds' increments are the generic path's: handlers/materials.ts).
 * Each is one transaction of the record's own write, announced on its stream as any change of it.
 */
import type { AssetRecord } from '../../storage/storage.js';
import { KINDS, type KindRow, type MaterialKind } from '../../shared/graph.js';
import type { OperationContext } from '../context.js';
import { badRequest, notFound, readJson, reply } from '../http.js';
import { incrementedScore } from '../models/material.js';
import { anchorConversations, withAnchor } from '../models/anchor.js';
import { touched } from '../models/conversation.js';
import { isObject, storedJson, uuid, type JsonObject } from '../validate.js';
import { clock, publish } from './common.js';

const row = (kind: MaterialKind): KindRow => KINDS.find((r) => r.kind === kind)!;

/** The SeededScoreIncrement sent, and its counts applied to `value` (400 when it names nothing of `kind`). */
async function increment(context: OperationContext, kind: MaterialKind) {
  const sent = await readJson(context.request, context.service.maxBodyBytes);
  if (!isObject(sent)) throw badRequest('The request body must be a SeededScoreIncrement (a JSON object).');
  // Checked before anything is read: a bad body is a 400 whatever the id.
  incrementedScore(row(kind), sent, {});
  return (value: JsonObject) => incrementedScore(row(kind), sent, value).score as JsonObject;
}

const idOf = (context: OperationContext, param: string) => uuid(context.params[param], `The ${param} id`);

export async function assetScoresIncrement(context: OperationContext) {
  const id = idOf(context, 'asset');
  const scored = await increment(context, 'asset');
  const time = clock(context);
  const result = await context.service.storage.editAsset({ asset: id }, (current) => ({
    record: {
      ...current.record,
      updated: time.now().toISOString(),
      score: scored(current.record as unknown as JsonObject) as NonNullable<AssetRecord['score']>,
    },
  }));
  if (!result) throw notFound(`No asset with id ${id}.`);
  publish(context, result.changes);
  return reply();
}

export async function conversationScoresIncrement(context: OperationContext) {
  const id = idOf(context, 'conversation');
  const scored = await increment(context, 'conversation');
  const time = clock(context);
  const result = await context.service.storage.editConversation({ conversation: id }, ({ record }) => ({
    record: { ...record, json: touched(record, time, (conversation) => void (conversation.score = scored(conversation))) },
  }));
  if (!result) throw notFound(`No conversation with id ${id}.`);
  publish(context, result.changes);
  return reply();
}

export async function messageScoresIncrement(context: OperationContext) {
  const id = idOf(context, 'message');
  const scored = await increment(context, 'conversationMessage');
  const time = clock(context);
  const result = await context.service.storage.editConversation({ message: id }, ({ record, messages }) => {
    const message = messages.find((m) => m.id === id)!;
    const value = JSON.parse(message.json) as JsonObject;
    const next = { ...value, score: scored(value), updated: { value: time.now().toISOString() } };
    return { record, putMessages: [{ ...message, json: storedJson(next) }] };
  });
  if (!result) throw notFound(`No message with id ${id}.`);
  publish(context, result.changes);
  return reply();
}

/** An anchor's score: on the anchor, and on the reference every conversation listing it holds. */
export async function anchorScoresIncrement(context: OperationContext) {
  const id = idOf(context, 'anchor');
  const scored = await increment(context, 'anchor');
  const time = clock(context);
  const changes = await context.service.storage.editAnchor(
    id,
    (current) => ({ conversations: current ? anchorConversations(current) : [] }),
    (current, found) => {
      if (!current) throw notFound(`No anchor with id ${id}.`);
      const anchor = JSON.parse(current.json) as JsonObject;
      const next = { ...anchor, score: scored(anchor), updated: { value: time.now().toISOString() } };
      return {
        anchor: { ...current, json: storedJson(next) },
        conversations: [...found.conversations.values()].map((record) => withAnchor(record, next, time)),
      };
    },
  );
  publish(context, changes);
  return reply();
}

/** An annotation's score: with its asset (written and announced with it), or on its own. */
export async function annotationScoresIncrement(context: OperationContext) {
  const id = idOf(context, 'annotation');
  const scored = await increment(context, 'annotation');
  const time = clock(context);
  const { storage } = context.service;
  const stored = await storage.getAnnotation(id);
  if (!stored) throw notFound(`No annotation with id ${id}.`);
  const next = (annotation: typeof stored) => ({ ...annotation, score: scored(annotation), updated: { value: time.now().toISOString() } });
  if (!stored.asset) {
    publish(context, await storage.putAnnotation(next(stored)));
    return reply();
  }
  const result = await storage.editAsset({ annotation: id }, (current) => ({
    record: { ...current.record, updated: time.now().toISOString() },
    putAnnotations: [next(current.annotations.find((a) => a.id === id)!)],
  }));
  if (!result) throw notFound(`No annotation with id ${id}.`);
  publish(context, result.changes);
  return reply();
}
