/**
 * Handlers of AnnotationApi and AnnotationsApi: what hangs on an asset, read one by one as
 * clients join it to the asset. An annotation of an asset is written with the asset (its `updated`, its change on the
 * assets stream, an activity); one of no asset stands alone.
 */
import type { OperationContext } from '../context.js';
import { notFound, readJson, reply } from '../http.js';
import { AnnotationTypeEnum } from '../enums.js';
import { activity, annotationWire, parseNewAnnotation, updateAnnotation } from '../models/asset.js';
import { object, oneOf, required, uuid } from '../validate.js';
import { clock, publish } from './common.js';

const annotationId = (context: OperationContext) => uuid(context.params.annotation, 'The annotation id');

export async function annotationSpecificAnnotationSnapshot(context: OperationContext) {
  const id = annotationId(context);
  const annotation = await context.service.storage.getAnnotation(id);
  if (!annotation) throw notFound(`No annotation with id ${id}.`);
  return reply(annotationWire(annotation));
}

/** annotationsSnapshot: every annotation, oldest first; `annotation_type_filter` keeps one type. */
export async function annotationsSnapshot(context: OperationContext) {
  const filter = context.url.searchParams.get('annotation_type_filter');
  const type = filter === null ? undefined : oneOf(filter, AnnotationTypeEnum, 'annotation_type_filter');
  const annotations = await context.service.storage.listAnnotations();
  return reply({ iterable: annotations.filter((a) => !type || a.type === type).map(annotationWire) });
}

export async function annotationsCreateNewAnnotation(context: OperationContext) {
  const time = clock(context);
  const annotation = parseNewAnnotation(await readJson(context.request, context.service.maxBodyBytes), time);
  const { storage } = context.service;
  if (!annotation.asset) {
    publish(context, await storage.putAnnotation(annotation));
    return reply(annotationWire(annotation));
  }
  const assetId = annotation.asset.id;
  const result = await storage.editAsset({ asset: assetId }, (current) => ({
    record: { ...current.record, updated: time.now().toISOString() },
    putAnnotations: [annotation],
    activities: [activity(time, { asset: assetId, pair: 'assetAnnotationAdded', value: 'an_annotation_was_added_by_the_user' })],
  }));
  if (!result) throw notFound(`No asset with id ${assetId}.`);
  publish(context, result.changes);
  return reply(annotationWire(annotation));
}

export async function annotationsDeleteSpecificAnnotation(context: OperationContext) {
  const id = annotationId(context);
  const time = clock(context);
  const { storage } = context.service;
  const result = await storage.editAsset({ annotation: id }, (current) => ({
    record: { ...current.record, updated: time.now().toISOString() },
    deleteAnnotations: [id],
    activities: [
      activity(time, { asset: current.record.id, pair: 'assetAnnotationDeleted', value: 'an_annotation_was_deleted_by_the_user' }),
    ],
  }));
  const changes = result ? result.changes : await storage.deleteAnnotation(id);
  if (!changes) throw notFound(`No annotation with id ${id}.`);
  publish(context, changes);
  return reply();
}

/** annotationUpdate: a new text, type or `favorited` for an annotation. */
export async function annotationUpdate(context: OperationContext) {
  const body = await readJson(context.request, context.service.maxBodyBytes);
  const id = required(object(body, 'annotation'), 'id', 'annotation', uuid);
  const time = clock(context);
  const { storage } = context.service;
  const stored = await storage.getAnnotation(id);
  if (!stored) throw notFound(`No annotation with id ${id}.`);
  const next = updateAnnotation(body, stored, time);
  if (!stored.asset) {
    publish(context, await storage.putAnnotation(next));
    return reply(annotationWire(next));
  }
  const result = await storage.editAsset({ annotation: id }, (current) => ({
    record: { ...current.record, updated: time.now().toISOString() },
    putAnnotations: [updateAnnotation(body, current.annotations.find((a) => a.id === id)!, time)],
    activities: [
      activity(time, { asset: current.record.id, pair: 'assetAnnotationUpdated', value: 'an_annotation_was_updated_by_the_user' }),
    ],
  }));
  if (!result) throw notFound(`No annotation with id ${id}.`);
  publish(context, result.changes);
  return reply(annotationWire(result.state.annotations.find((a) => a.id === id)!));
}
