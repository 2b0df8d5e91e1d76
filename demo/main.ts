/**
 * The demo: an API explorer for the service, with no backend running.
 * Everything shown comes from the worker through plain fetch and WebSocket;
 * each pane is a module of its own, mounted here.
 */
import { DEFAULT_BASES, startPiecesService, watchService, type StartOptions } from 'pieces-os-worker';
import { createApi } from './api.js';
import { mountApplications } from './applications.js';
import { mountAssets } from './assets.js';
import { startChat } from './chat.js';
import { mountConversation } from './conversation.js';
import { mountConversations } from './conversations.js';
import { restrictConnections } from './csp.js';
import { mountErrors } from './errors.js';
import { mountMaterials } from './materials.js';
import { mountLtm } from './ltm.js';
import { mountMcp } from './mcp.js';
import { mountExternalApplications } from './external.js';
import { mountHeader, setStatus } from './header.js';
import { mountModels } from './models.js';
import { mountMirror } from './mirror.js';
import { mountRequestLog } from './request-log.js';
import { mountSessions } from './sessions.js';
import { mountSnippets } from './snippets.js';
import { mountUsageEvents } from './usage-events.js';

/** False in a build made with PIECES_FAST_PATH=off (vite.config.ts). */
declare const __PIECES_FAST_PATH__: boolean;

const errors = mountErrors();

async function main() {
  setStatus('starting', 'Worker starting…');
  // ?bases=<comma-separated URLs>, ?worker=<script URL>, ?mirror=<Pieces OS URL, or auto> (&mirrorRetryMax=<ms>) and ?sampleAssets=0
  // explore other set-ups.
  const params = new URLSearchParams(location.search);
  const bases = params.get('bases')?.split(',');
  const mirror = params.get('mirror');
  const retryMax = params.get('mirrorRetryMax');
  restrictConnections([...(bases ?? DEFAULT_BASES), ...(mirror && mirror !== 'auto' ? [mirror] : [])]);
  const options: StartOptions = {
    // ?fastPath=0 (or a build with PIECES_FAST_PATH=off): every request through the worker's fetch handler.
    fastPath: __PIECES_FAST_PATH__ && params.get('fastPath') !== '0',
    ...(bases ? { bases } : {}),
    ...(params.get('worker') ? { url: params.get('worker')! } : {}),
    ...(mirror ? { mirror: { upstream: mirror, ...(retryMax ? { retryMaxMs: Number(retryMax) } : {}) } } : {}),
    ...(params.get('sampleAssets') === '0' ? { sampleAssets: false } : {}),
  };
  const service = await startPiecesService(options);
  const base = service.bases[0]!;
  const api = createApi(base, mountRequestLog());
  // The copilot pane. A stored answer changes its conversation: the stream's message for
  // that change refreshes the list and the open conversation, so nothing more to do here.
  const chat = startChat(base, errors.show, () => {});
  // Lost (and started again), recovered (each pane reads what it shows again), another worker version.
  const watch = watchService(service, () => startPiecesService(options));
  const header = mountHeader(api, service, watch);
  const indicator = mountMirror(service, watch);

  const conversation = mountConversation(api, chat, errors, watch);
  const conversations = mountConversations(api, base, conversation, errors, watch);
  const assets = mountAssets(api, conversation, errors);
  const snippets = mountSnippets(api, base, errors);
  const applications = mountApplications(api, errors, watch);
  const sessions = mountSessions(api, errors);
  mountUsageEvents(api, applications, sessions, errors);
  const external = mountExternalApplications(api);
  const models = mountModels(api, base, errors);
  const materials = mountMaterials(api, base, errors, watch);
  const ltm = mountLtm(api, base, errors, watch);
  const mcp = mountMcp(service, watch, mirror, errors);

  // The service has started: a pane that cannot load (a mirrored Pieces OS without one of its
  // operations, say) shows its error, and the others load all the same.
  const shown = (loading: Promise<unknown>) => loading.catch((error: unknown) => errors.show(error));
  await shown(assets.load());
  await shown(conversations.listen());
  await shown(snippets.listen());
  await shown(materials.listen());
  await shown(ltm.listen());
  await shown(mcp.listen());
  await Promise.all(
    [header.showHealth(), applications.refresh(), sessions.refresh(), external.refresh(), models.refresh(), indicator.refresh()].map(shown),
  );
  document.body.dataset.loaded = 'true';
}

main().catch((error: Error) => {
  setStatus('error', `The service could not start: ${error.message}`);
  errors.show(error);
});
