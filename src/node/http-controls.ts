/**
 * The controls over HTTP, for tests written in other languages against the
 * loopback server: `POST /__pieces/reset`, `POST /__pieces/seed` (the data as
 * JSON), `GET /__pieces/export`, `POST /__pieces/use` (an override or a list),
 * `POST /__pieces/reset-overrides`. Outside the Pieces OS API's paths.
 */
import type { Service } from '../core/service.js';
import { errorResponse, HttpError, json, noContent, readJson } from '../core/http.js';
import type { Override } from '../core/overrides.js';

export const CONTROLS_PATH = '/__pieces/';

const ROUTES: Record<string, { method: 'GET' | 'POST'; run: (service: Service, body: unknown) => Promise<unknown> }> = {
  reset: { method: 'POST', run: (service) => service.reset() },
  seed: { method: 'POST', run: (service, body) => service.seed((body ?? {}) as never) },
  export: { method: 'GET', run: (service) => service.exportData() },
  use: { method: 'POST', run: (service, body) => service.use(...((Array.isArray(body) ? body : [body]) as Override[])) },
  'reset-overrides': { method: 'POST', run: (service) => service.resetOverrides() },
};

/** The answer to a control request (a path under `/__pieces/`). */
export async function answerControl(service: Service, request: Request, path: string): Promise<Response> {
  const name = path.slice(CONTROLS_PATH.length);
  const route = Object.hasOwn(ROUTES, name) ? ROUTES[name]! : undefined;
  try {
    if (!route) throw new HttpError(404, `No control ${path}; the controls are ${Object.keys(ROUTES).map((n) => CONTROLS_PATH + n).join(', ')}.`);
    if (request.method !== route.method) {
      throw new HttpError(405, `${request.method} is not allowed on ${path}; use ${route.method}.`, { Allow: route.method });
    }
    const result = await route.run(service, route.method === 'POST' ? await readJson(request) : undefined);
    return result === undefined ? noContent() : json(result);
  } catch (error) {
    if (error instanceof HttpError) return errorResponse(error);
    throw error;
  }
}
