/**
 * Backups and the database's export and import (BackupsApi, BackupApi, DatabaseApi), over the
 * store's own data format (src/core/data/format.ts).
 *
 * - A backup is a `backup` material (the SDK's Backup, through the generic path for its snapshot
 *   and item) whose content, the data format of the store when it was made (its backups left
 *   out), is kept beside it in the meta store (`backupKeys`). Its creation is complete when its
 *   create answers: its status is COMPLETED at 100 %, and there is nothing in progress to cancel.
 * - A restore replaces the store's records with the backup's content, in one transaction (what
 *   was written after the backup is gone; the backups themselves stay), as `reset` does with the
 *   configured data.
 * - `GET /database/export` is the whole store (but its backups) as an ExportedDatabase
 *   (src/core/models/exported-database.ts); `POST /database/import` replaces the store with one,
 *   as a restore does.
 * - The progress sockets (`/backups/create/streamed/websocket`, `/backup/{backup}/restore/streamed/websocket`)
 *   send the BackupStreamedProgress of each creation (of a restoration of that backup) made while
 *   they are open: INITIALIZED at 0 %, then COMPLETED at 100 % with the backup (or FAILED).
 */
import { backupKeys, type Change, type MaterialRecord, type StoredData } from '../../storage/storage.js';
import { checkShape } from '../../shared/shapes.js';
import { PIECES_OS_VERSION } from '../../shared/version.js';
import type { OperationContext } from '../context.js';
import { parseData } from '../data.js';
import { toData } from '../data/export.js';
import type { PiecesData } from '../data/format.js';
import { EventFrames } from '../event-frames.js';
import { badRequest, clip, HttpError, notFound, readJson, reply } from '../http.js';
import { exportedDatabase, importedData, UNEXPORTED } from '../models/exported-database.js';
import { STREAM_HEADER, type StreamRequestKind } from '../stream-wire.js';
import { uuid, type JsonObject } from '../validate.js';
import { clock, publish } from './common.js';
import { platformOf } from './os.js';

const KIND = 'backup' as const;

// ---- Progress: what the progress sockets send, per service (its copilot: the one object every request of it shares) ----

type Listener = (progress: JsonObject) => void;
const hubs = new WeakMap<object, Map<string, Set<Listener>>>();
const topics = (context: OperationContext) => {
  let hub = hubs.get(context.service.copilot);
  if (!hub) hubs.set(context.service.copilot, (hub = new Map()));
  return hub;
};
const CREATION = 'creation';
const restoration = (id: string) => `restoration:${id}`;

function emit(context: OperationContext, topic: string, progress: JsonObject): void {
  for (const listener of topics(context).get(topic) ?? []) listener(progress);
}

/** Runs `work`, sending its progress on `topic`'s sockets: INITIALIZED, then COMPLETED with its backup, or FAILED. */
async function reported<T extends JsonObject>(
  context: OperationContext,
  topic: string,
  work: () => Promise<T>,
  backupOf: (done: T) => JsonObject,
): Promise<T> {
  emit(context, topic, { status: 'INITIALIZED', percentage: 0 });
  try {
    const done = await work();
    emit(context, topic, completed(backupOf(done)));
    return done;
  } catch (error) {
    emit(context, topic, { status: 'FAILED', percentage: null });
    throw error;
  }
}

const PROGRESS_MARKER: StreamRequestKind = 'progress';

/** A progress socket: the page's socket shim asks with the marker header and gets the frames of `topic` as server-sent events while it listens. */
function progressSocket(context: OperationContext, topic: string) {
  const { request, url } = context;
  if (request.headers.get(STREAM_HEADER) !== PROGRESS_MARKER) {
    throw new HttpError(426, `${clip(url.pathname)} is a WebSocket: connect with new WebSocket("ws://${url.host}${clip(url.pathname)}").`, {
      Upgrade: 'websocket',
    });
  }
  const listeners = topics(context);
  const frames = new EventFrames(() => {
    listeners.get(topic)?.delete(send);
    if (!listeners.get(topic)?.size) listeners.delete(topic);
  });
  const send: Listener = (progress) => frames.push([JSON.stringify(progress)]);
  if (!listeners.has(topic)) listeners.set(topic, new Set());
  listeners.get(topic)!.add(send);
  return reply(frames);
}

/** The store's records (its backups left out) as the data format. */
async function storeData(context: OperationContext): Promise<PiecesData> {
  const stored = await context.service.storage.dumpData();
  return toData({ ...stored, materials: (stored.materials ?? []).filter((m) => m.kind !== UNEXPORTED) });
}

/** A body that may be absent (the SDK sends none when the caller gives none), else checked strictly as `model`. */
async function optionalBody(context: OperationContext, model: string): Promise<JsonObject | undefined> {
  const value = await readJson(context.request, context.service.maxBodyBytes);
  if (value === undefined) return undefined;
  const problem = checkShape(model, value, model[0]!.toLowerCase() + model.slice(1));
  if (problem) throw badRequest(`${problem}.`.replace(/\.\.$/, '.'));
  return value as JsonObject;
}

/** Keeps `data` as a new backup: its content first, then its record (a record is never without its content). */
/** Makes a backup of what `data` reads, its progress sent on the creation sockets. */
const create = (context: OperationContext, data: () => Promise<PiecesData>) =>
  reported(
    context,
    CREATION,
    async () => keep(context, await data()),
    (backup) => backup,
  );

async function keep(context: OperationContext, data: PiecesData): Promise<JsonObject & { id: string }> {
  const { storage, userAgent } = context.service;
  const time = clock(context);
  const id = time.newId();
  const now = time.now().toISOString();
  const value = {
    id,
    version: PIECES_OS_VERSION,
    timestamp: now,
    bytes: new TextEncoder().encode(JSON.stringify(data)).length,
    created: { value: now },
    device_name: userAgent.slice(0, 200) || 'pieces-os-worker',
    platform: platformOf(userAgent) ?? 'UNKNOWN',
  };
  await storage.setMeta(backupKeys(id).content, data);
  const { changes } = await storage.editMaterials([], () => ({ put: [{ kind: KIND, id, value }] }));
  publish(context, changes);
  return value;
}

/** The backup a path names, or a 404. */
async function pathBackup(context: OperationContext): Promise<MaterialRecord> {
  const id = uuid(context.params.backup, 'The backup id');
  const record = await context.service.storage.getMaterial(KIND, id);
  if (!record) throw notFound(`No backup with id ${id}.`);
  return record;
}

/**
 * Replaces the store's records with `data` in one transaction, keeping the backups (their records
 * and contents); the copilot forgets what it read, and the changes are announced.
 */
async function replaceStore(context: OperationContext, data: StoredData): Promise<void> {
  const { storage } = context.service;
  const backups = await storage.listMaterials(KIND);
  const materials = [
    ...(data.materials ?? []).filter((m) => m.kind !== KIND),
    ...backups.map(({ kind, id, value }) => ({ kind, id, value })),
  ];
  const changes: Change[] = await storage.loadData({ ...data, materials }, { replace: true });
  context.service.copilot.reset();
  publish(context, changes);
}

async function restore(context: OperationContext): Promise<JsonObject> {
  const backup = await pathBackup(context);
  await optionalBody(context, 'Backup');
  const { storage } = context.service;
  const content = await storage.getMeta<PiecesData>(backupKeys(backup.id).content);
  if (!content)
    throw new HttpError(
      409,
      `The backup ${backup.id} keeps no content here (its record came in with data, not from a backup made here): it cannot be restored.`,
    );
  return reported(
    context,
    restoration(backup.id),
    async () => {
      await replaceStore(context, parseData(content, clock(context)));
      await storage.setMeta(backupKeys(backup.id).restored, 'COMPLETED');
      return backup.value;
    },
    (value) => value,
  );
}

const completed = (backup: JsonObject) => ({ status: 'COMPLETED', percentage: 100, backup });

// ---- BackupsApi ----

export async function backupsCreateNewBackup(context: OperationContext) {
  await optionalBody(context, 'SeededBackup');
  return reply(await create(context, () => storeData(context)));
}

/** The streamed create: made at once, so its one progress is the completed backup. */
export async function backupsCreateNewBackupStreamed(context: OperationContext) {
  await optionalBody(context, 'SeededBackup');
  return reply(completed(await create(context, () => storeData(context))));
}

export async function backupsDeleteSpecificBackup(context: OperationContext) {
  const id = uuid(context.params.backup, 'The backup id');
  await optionalBody(context, 'Backup');
  const { storage } = context.service;
  const { changes } = await storage.editMaterials([{ kind: KIND, id }], (found) => {
    if (!found.size) throw notFound(`No backup with id ${id}.`);
    return { delete: [{ kind: KIND, id }] };
  });
  for (const key of Object.values(backupKeys(id))) await storage.setMeta(key, undefined);
  publish(context, changes);
  return reply();
}

/** Every backup's creation (each complete) and every restoration made of one. */
export async function backupsStreamedProgress({ service }: OperationContext) {
  const backups = await service.storage.listMaterials(KIND);
  const restored = await Promise.all(backups.map((b) => service.storage.getMeta<string>(backupKeys(b.id).restored)));
  return reply({
    backups: backups.map((b) => completed(b.value)),
    restorations: backups.flatMap((b, i) => (restored[i] ? [{ status: restored[i], percentage: 100, backup: b.value }] : [])),
  });
}

// ---- BackupApi ----

/** Backs the assets sent up: a backup holding them (with their formats and annotations), and nothing else. */
async function backupAssets(context: OperationContext, ids: string[]) {
  const data = await storeData(context);
  for (const id of ids) if (!data.assets.some((a) => a.id === id)) throw notFound(`No asset with id ${id}.`);
  const assets = data.assets.filter((a) => ids.includes(a.id));
  // The data format of a store holding these assets alone.
  const none: StoredData = {
    ...{ applications: [], sessions: [], events: [], conversations: [], assets: [], formats: [], annotations: [] },
    ...{ tags: [], websites: [], activities: [], external: [], anchors: [], models: [] },
  };
  await create(context, async () => ({ ...toData(none), assets }));
  return reply();
}

export async function backup(context: OperationContext) {
  const body = await readJson(context.request, context.service.maxBodyBytes);
  const items = (body as { iterable?: unknown })?.iterable;
  if (!Array.isArray(items) || items.length === 0)
    throw badRequest('The request body must be Assets ({ iterable: [Asset, …] }) naming at least one asset.');
  return backupAssets(
    context,
    items.map((item, i) => uuid((item as { id?: unknown })?.id, `assets.iterable[${i}].id`)),
  );
}

export async function backupAsset(context: OperationContext) {
  const body = await readJson(context.request, context.service.maxBodyBytes);
  return backupAssets(context, [uuid((body as { id?: unknown })?.id, 'asset.id')]);
}

export async function backupSpecificCreationStatus(context: OperationContext) {
  const backup = await pathBackup(context);
  return reply({ value: 'COMPLETED', percentage: 100, backup: backup.value });
}

/** Nothing to cancel: a backup's creation is complete when its create answers (its status stays COMPLETED). */
export async function backupSpecificCreationCancel(context: OperationContext) {
  await pathBackup(context);
  return reply();
}

export async function backupRestoreSpecificBackup(context: OperationContext) {
  return reply(await restore(context));
}

export async function backupRestoreSpecificBackupStreamed(context: OperationContext) {
  return reply(completed(await restore(context)));
}

/** COMPLETED once restored here; UNKNOWN (and no percentage) for a backup never restored. */
export async function backupSpecificRestorationStatus(context: OperationContext) {
  const backup = await pathBackup(context);
  const restored = await context.service.storage.getMeta<string>(backupKeys(backup.id).restored);
  return reply(
    restored ? { value: restored, percentage: 100, backup: backup.value } : { value: 'UNKNOWN', percentage: null, backup: backup.value },
  );
}

/** Nothing to cancel: a restoration is complete (in one transaction) when its request answers. */
export async function backupSpecificRestorationCancel(context: OperationContext) {
  await pathBackup(context);
  await optionalBody(context, 'Backup');
  return reply();
}

// ---- DatabaseApi ----

export async function databaseExport(context: OperationContext) {
  return reply(exportedDatabase(await storeData(context)));
}

export async function databaseImport(context: OperationContext) {
  const body = await readJson(context.request, context.service.maxBodyBytes);
  if (body === undefined) throw badRequest('The request body is required: send an ExportedDatabase (what GET /database/export gives).');
  await replaceStore(context, parseData(importedData(body), clock(context)));
  return reply();
}

// ---- The progress sockets ----

export async function backupsCreateNewBackupStreamedWebsocket(context: OperationContext) {
  return progressSocket(context, CREATION);
}

export async function backupRestoreSpecificBackupStreamedWebsocket(context: OperationContext) {
  const backup = await pathBackup(context);
  return progressSocket(context, restoration(backup.id));
}
