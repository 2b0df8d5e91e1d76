/**
 * The page API's requests (hello, claim, add assets, report external
 * applications, the copilot's model, the test controls), answered the same way
 * by every host: the Service Worker over a MessageChannel, the in-page host by
 * a direct call.
 */
import { parseModelConfig } from './copilot/model.js';
import { HttpError } from './http.js';
import type { Override } from './overrides.js';
import type { Service } from './service.js';
import { array, object, optional, required, string } from './validate.js';
import type { Storage } from '../storage/storage.js';
import type { PageReply, PageRequest } from '../stream/protocol.js';
import { VERSION } from '../version.js';

export async function answerPageRequest(
  service: Service,
  storage: Storage,
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
      await service.addAssets(request.assets);
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
    case 'pieces:set-model':
      return { ok: true, model: (await service.setModel(request.model === undefined || request.model === null ? undefined : parseModelConfig(request.model))).description };
    case 'pieces:get-model':
      return { ok: true, model: (await service.model()).description };
    // The test controls; in a worker, overrides then apply to every tab of the origin.
    case 'pieces:reset':
      await service.reset();
      return { ok: true };
    case 'pieces:seed':
      await service.seed(request.data as never);
      return { ok: true };
    case 'pieces:export':
      return { ok: true, data: await service.exportData() };
    case 'pieces:use':
      await service.use(...(array(request.overrides, 'overrides') as Override[]));
      return { ok: true };
    case 'pieces:reset-overrides':
      await service.resetOverrides();
      return { ok: true };
    default:
      throw new HttpError(400, `Unknown page request ${JSON.stringify((request as { type?: unknown })?.type)}.`);
  }
}
