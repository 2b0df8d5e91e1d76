/** The worker's side of the test controls: a page's `reset`, `seed`, `exportData`, `use`, `resetOverrides`. */
import type { Service } from '../core/service.js';
import type { Override } from '../core/overrides.js';
import { array } from '../core/validate.js';
import type { ControlRequest, PageReply, PageRequest } from '../stream/protocol.js';

const CONTROLS = new Set<string>(['pieces:reset', 'pieces:seed', 'pieces:export', 'pieces:use', 'pieces:reset-overrides'] satisfies Array<ControlRequest['type']>);

export const isControl = (request: PageRequest): request is ControlRequest => CONTROLS.has(request?.type);

/** Runs a control on the worker's service; overrides then apply to every tab of the origin. */
export async function answerControl(service: Service, request: ControlRequest): Promise<PageReply> {
  switch (request.type) {
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
  }
}
