/**
 * The page API's requests (hello, add assets, report external applications),
 * answered the same way by every host: the Service Worker over a
 * MessageChannel, the in-page host by a direct call.
 */
import { HttpError } from './http.js';
import { parseAssets } from './models/asset.js';
import type { Service } from './service.js';
import { randomUUID } from './uuid.js';
import { array, object, optional, required, string } from './validate.js';
import type { Change, Storage } from '../storage/storage.js';
import type { PageReply, PageRequest } from '../stream/protocol.js';
import { VERSION } from '../version.js';

export async function answerPageRequest(
  service: Service,
  storage: Storage,
  announce: (change: Change) => void,
  request: PageRequest,
  claim: () => Promise<void>,
): Promise<PageReply> {
  switch (request?.type) {
    case 'pieces:hello':
      return { ok: true, version: VERSION, bases: service.bases };
    case 'pieces:claim':
      await claim();
      return { ok: true };
    case 'pieces:add-assets':
      for (const change of await storage.putAssets(parseAssets(request.assets, randomUUID, new Date().toISOString()))) announce(change);
      return { ok: true };
    case 'pieces:report-external-applications':
      await storage.putExternalApplications(
        array(request.applications, 'applications').map((item, i) => {
          const application = object(item, `applications[${i}]`);
          const version = optional(application, 'version', `applications[${i}]`, string);
          return { name: required(application, 'name', `applications[${i}]`, string), ...(version ? { version } : {}) };
        }),
      );
      return { ok: true };
    default:
      throw new HttpError(400, `Unknown page request ${JSON.stringify((request as { type?: unknown })?.type)}.`);
  }
}
