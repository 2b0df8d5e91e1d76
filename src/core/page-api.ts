/**
 * The page API's requests (hello, claim, assets, external applications, the
 * copilot's model, the test controls), answered the same way by every host:
 * the Service Worker over a MessageChannel, the in-page host by a direct call.
 */
import { HttpError } from './http.js';
import { parseModelConfig } from './copilot/model.js';
import type { Service } from './service.js';
import { array, object, optional, required, string } from './validate.js';
import type { Storage } from '../storage/storage.js';
import type { PageReply, PageRequest } from '../stream/protocol.js';
import { VERSION } from '../version.js';
import { answerControl, isControl } from '../worker/controls.js';

export async function answerPageRequest(
  service: Service,
  storage: Storage,
  request: PageRequest,
  claim: () => Promise<void>,
): Promise<PageReply> {
  if (isControl(request)) return answerControl(service, request);
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
      return {
        ok: true,
        model: (await service.setModel(request.model === undefined || request.model === null ? undefined : parseModelConfig(request.model))).description,
      };
    case 'pieces:get-model':
      return { ok: true, model: (await service.model()).description };
    default:
      throw new HttpError(400, `Unknown page request ${JSON.stringify((request as { type?: unknown })?.type)}.`);
  }
}
