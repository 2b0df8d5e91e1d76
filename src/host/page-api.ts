/**
 * The page API's requests (hello, claim, assets, external applications, the
 * copilot's model, the test controls), answered the same way by every host:
 * the Service Worker over a MessageChannel, the in-page host by a direct call.
 */
import { HttpError } from '../core/http.js';
import { parseModelConfig } from '../core/copilot/model.js';
import { catalogueId } from '../core/copilot/copilot.js';
import type { HostService } from './create-host.js';
import { array, object, optional, required, string } from '../core/validate.js';
import { VERSION } from '../shared/version.js';
import { controlOfMessage } from './controls.js';
import type { PageReply, PageRequest } from './protocol.js';

export async function answerPageRequest(service: HostService, request: PageRequest, claim: () => Promise<void>): Promise<PageReply> {
  const control = controlOfMessage(request?.type);
  if (control) {
    const [, { run, field }] = control;
    const result = await run(service, field ? (request as Record<string, unknown>)[field] : undefined);
    return result === undefined ? { ok: true } : { ok: true, data: result };
  }
  switch (request?.type) {
    case 'pieces:hello':
      return { ok: true, version: VERSION, bases: service.bases };
    case 'pieces:claim':
      await claim();
      return { ok: true };
    case 'pieces:add-assets':
      await service.addAssets((request as { assets: unknown }).assets);
      return { ok: true };
    case 'pieces:report-external-applications':
      await service.reportExternalApplications(
        array((request as { applications: unknown }).applications, 'applications').map((item, i) => {
          const application = object(item, `applications[${i}]`);
          const version = optional(application, 'version', `applications[${i}]`, string);
          return { name: required(application, 'name', `applications[${i}]`, string), ...(version ? { version } : {}) };
        }),
      );
      return { ok: true };
    case 'pieces:set-model': {
      const { model, for: forModel } = request as { model?: unknown; for?: unknown };
      const target = forModel === undefined || forModel === null ? undefined : string(forModel, 'for');
      return {
        ok: true,
        model: (await service.setModel(model === undefined || model === null ? undefined : parseModelConfig(model), target)).description,
      };
    }
    case 'pieces:get-model': {
      const { for: forModel } = request as { for?: unknown };
      const target = forModel === undefined || forModel === null ? undefined : catalogueId(string(forModel, 'for'), 'for');
      return { ok: true, model: (await service.model(target)).description };
    }
    case 'pieces:model-mapping':
      return {
        ok: true,
        mapping: Object.fromEntries([...(await service.modelMapping())].map(([id, adapter]) => [id, adapter.description])),
      };
    case 'pieces:mirror-permission': {
      const { granted, upstream, reason } = request as { granted?: unknown; upstream?: unknown; reason?: unknown };
      const report = {
        granted: granted === true,
        ...(typeof upstream === 'string' ? { upstream } : {}),
        ...(typeof reason === 'string' ? { reason } : {}),
      };
      return { ok: true, data: await service.mirrorPermission(report) };
    }
    default:
      throw new HttpError(400, `Unknown page request ${JSON.stringify((request as { type?: unknown })?.type)}.`);
  }
}
