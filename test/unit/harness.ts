/** Test harness: a service over a fresh fake IndexedDB, and the official SDK pointed at it. */
import { ApplicationsApi, Configuration, ConversationsApi } from '@pieces.app/pieces-os-client';
import { createService, type ServiceOptions } from '../../src/core/service.js';
import { openStorage } from '../../src/storage/idb-storage.js';
import { SAMPLE_ASSETS } from '../../src/fixtures/sample-assets.js';
import type { Change } from '../../src/storage/storage.js';

export const BASE = 'http://localhost:1000';

let counter = 0;

export async function setup(options: Partial<ServiceOptions> & { databaseName?: string; sampleAssets?: boolean } = {}) {
  const databaseName = options.databaseName ?? `test-${Date.now()}-${counter++}`;
  const storage = await openStorage({ name: databaseName, seedAssets: options.sampleAssets === false ? [] : SAMPLE_ASSETS });
  const changes: Change[] = [];
  const service = createService({ storage, onChange: (c) => changes.push(c), ...options });
  const fetchApi = (input: RequestInfo | URL, init?: RequestInit) => service.handle(new Request(input, init));
  const configuration = new Configuration({ basePath: BASE, fetchApi });
  return {
    service,
    storage,
    databaseName,
    changes,
    fetch: fetchApi,
    applications: new ApplicationsApi(configuration),
    conversations: new ConversationsApi(configuration),
    configuration,
  };
}
