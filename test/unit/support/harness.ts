/** Test harness: a service over a fresh fake IndexedDB, and the official SDK pointed at it. */
import {
  AllocationsApi,
  AnchorApi,
  AnchorsApi,
  ApplicationApi,
  ApplicationsApi,
  AssetApi,
  AssetsApi,
  Configuration,
  ConnectorApi,
  ConversationApi,
  ConversationMessageApi,
  ConversationMessagesApi,
  ConversationsApi,
  ConversationTypeEnum,
  ModelApi,
  ModelsApi,
  OSApi,
  QGPTConversationMessageRoleEnum,
  RangeApi,
  RangesApi,
  UserApi,
  WorkstreamPatternEngineApi,
  type SeededConversation,
  WellKnownApi,
} from '@pieces.app/pieces-os-client';
import { createService, type ServiceOptions } from '../../../src/core/service.js';
import { openStorage } from '../../../src/storage/idb/storage.js';
import { SAMPLE_ASSETS } from '../../../src/core/fixtures/sample-assets.js';
import type { Change, NewAsset } from '../../../src/storage/storage.js';
import { parseData } from '../../../src/core/data.js';
import { parseAssets, type AssetInput } from '../../../src/core/models/asset.js';

const testClock = { now: () => new Date(), newId: () => crypto.randomUUID() };

/** The sample assets as the records a database starts with. */
export const sampleData = () => parseData({ assets: SAMPLE_ASSETS }, testClock);

/** An AssetInput (what addAssets takes) as the records of a whole new asset. */
export const newAsset = (input: AssetInput): NewAsset => parseAssets([input], testClock)[0]!;

export const BASE = 'http://localhost:1000';

let counter = 0;

export async function setup(
  options: Partial<ServiceOptions> & { databaseName?: string; sampleAssets?: boolean; headers?: Record<string, string> } = {},
) {
  const databaseName = options.databaseName ?? `test-${Date.now()}-${counter++}`;
  const storage = await openStorage({ name: databaseName, initialData: options.sampleAssets === false ? {} : sampleData() });
  const changes: Change[] = [];
  const service = createService({ storage, onChange: (c) => changes.push(c), ...options });
  const fetchApi = (input: RequestInfo | URL, init?: RequestInit) => service.handle(new Request(input, init));
  const configuration = new Configuration({ basePath: BASE, fetchApi, headers: options.headers });
  return {
    service,
    storage,
    databaseName,
    changes,
    fetch: fetchApi,
    applications: new ApplicationsApi(configuration),
    conversations: new ConversationsApi(configuration),
    conversation: new ConversationApi(configuration),
    messages: new ConversationMessagesApi(configuration),
    message: new ConversationMessageApi(configuration),
    assets: new AssetsApi(configuration),
    asset: new AssetApi(configuration),
    application: new ApplicationApi(configuration),
    connector: new ConnectorApi(configuration),
    user: new UserApi(configuration),
    wellKnown: new WellKnownApi(configuration),
    models: new ModelsApi(configuration),
    model: new ModelApi(configuration),
    anchors: new AnchorsApi(configuration),
    anchor: new AnchorApi(configuration),
    ranges: new RangesApi(configuration),
    range: new RangeApi(configuration),
    os: new OSApi(configuration),
    allocations: new AllocationsApi(configuration),
    workstream: new WorkstreamPatternEngineApi(configuration),
    configuration,
  };
}

/**
 * Every record of every store of a database, as one JSON string (for "nothing changed" checks);
 * without the snapshot segments and the search indexes kept for a cold start, which are derived
 * from the records (kept by reads, checked against the change log).
 */
export async function dump(databaseName: string): Promise<string> {
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const request = indexedDB.open(databaseName);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  const names = [...db.objectStoreNames].filter((name) => name !== 'snapshots' && name !== 'search');
  const tx = db.transaction(names);
  const result: Record<string, unknown> = {};
  await Promise.all(
    names.map(
      (name) =>
        new Promise<void>((resolve, reject) => {
          const request = tx.objectStore(name).openCursor();
          const rows: unknown[] = [];
          request.onsuccess = () => {
            const cursor = request.result;
            if (!cursor) {
              result[name] = rows;
              resolve();
              return;
            }
            rows.push([cursor.key, cursor.value]);
            cursor.continue();
          };
          request.onerror = () => reject(request.error);
        }),
    ),
  );
  db.close();
  return JSON.stringify(result);
}

export const jsonPost = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json', ...headers },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

/** A valid Application body. */
export const application = (overrides: Record<string, unknown> = {}) => ({
  id: crypto.randomUUID(),
  name: 'VS_CODE',
  version: '1.2.3',
  platform: 'LINUX',
  onboarded: true,
  privacy: 'OPEN',
  ...overrides,
});

/** A whole Model, as the SDK's ModelToJSON writes it. */
export const MODEL = {
  id: 'model-1',
  version: '4o',
  created: { value: '2026-01-01T00:00:00.000Z' },
  name: 'GPT-4o',
  cloud: true,
  type: 'BALANCED',
  usage: 'CODE_CONVERSATION',
  foundation: 'GPT_4',
};

/** A SeededConversation named `name` whose messages alternate USER and ASSISTANT, one per text. */
export const seeded = (name: string, texts: string[] = []): SeededConversation => ({
  type: ConversationTypeEnum.Copilot,
  name,
  messages: texts.map((raw, i) => ({
    role: i % 2 ? QGPTConversationMessageRoleEnum.Assistant : QGPTConversationMessageRoleEnum.User,
    fragment: { string: { raw } },
  })),
});
