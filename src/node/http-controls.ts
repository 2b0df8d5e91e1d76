/**
 * The test controls over HTTP under `/__pieces/` on the loopback server (and `GET /__pieces/mirror`),
 * from the one controls table (docs/testing.md, "Controls").
 */
import type { HostService } from '../host/create-host.js';
import { HttpError, readJson, reply } from '../core/http.js';
import { CONTROLS, controlOfPath } from '../host/controls.js';

export const CONTROLS_PATH = '/__pieces/';

/** The answer to a control request (a path under `/__pieces/`). */
export async function answerControl(service: HostService, request: Request, path: string): Promise<Response> {
  const found = controlOfPath(path.slice(CONTROLS_PATH.length));
  try {
    if (!found) {
      const paths = Object.values(CONTROLS).map((control) => CONTROLS_PATH + control.path);
      throw new HttpError(404, `No control ${path}; the controls are ${paths.join(', ')}.`);
    }
    const [, control] = found;
    if (request.method !== control.method) {
      throw new HttpError(405, `${request.method} is not allowed on ${path}; use ${control.method}.`, { Allow: control.method });
    }
    // A POST's argument is its JSON body; a GET's is its query parameter named after the control's field.
    const arg = control.method === 'POST' ? await readJson(request) : control.field && new URL(request.url).searchParams.get(control.field);
    const result = await control.run(service, arg ?? undefined);
    return reply(result);
  } catch (error) {
    if (error instanceof HttpError) return reply(error);
    throw error;
  }
}
