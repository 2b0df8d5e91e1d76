/** What the browser tests do in a demo page: open it, record a stream socket, read ids. */
import { afterEach, inject } from 'vitest';
import { launch, type BrowserContext, type Page } from './engine.js';

const STREAM = 'ws://localhost:1000/conversations/stream/identifiers';

export type StreamItem = { conversation: { id: string }; deleted?: true };

declare global {
  interface Window {
    /** Each message's `iterable`, in arrival order, of the socket a test opened. */
    streamMessages: StreamItem[][];
    /** That socket; opening another closes it. */
    streamSocket?: WebSocket;
  }
}

/** Opens the demo (with `query`, e.g. `?bases=…`) in a new page, once the worker controls it. */
export async function openDemo(context: BrowserContext, query = ''): Promise<Page> {
  const page = await context.newPage();
  await page.goto(inject('demoUrl') + query);
  await page.waitForSelector('#status[data-state="ready"]');
  return page;
}

/**
 * Opens a blank page of the demo's origin, with no Content-Security-Policy, once
 * the worker (installed by a demo page before, with its bases) controls it.
 */
export async function openProbe(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${inject('demoUrl')}probe.html`);
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
  return page;
}

/**
 * Opens a stream socket in the page that records every message (closing the one
 * opened before); resolves with the first message, the snapshot.
 */
export const listen = (page: Page) =>
  page.evaluate(
    (url) =>
      new Promise<StreamItem[]>((resolve, reject) => {
        window.streamSocket?.close();
        window.streamMessages = [];
        const socket = new WebSocket(url);
        window.streamSocket = socket;
        socket.onmessage = (event) => {
          if (window.streamSocket !== socket) return;
          window.streamMessages.push(JSON.parse(event.data).iterable);
          if (window.streamMessages.length === 1) resolve(window.streamMessages[0]!);
        };
        socket.onerror = () => reject(new Error('the stream failed'));
      }),
    STREAM,
  );

/** The ids a recording socket knows after applying its messages in order. */
export const socketIds = (page: Page) =>
  page.evaluate(() => {
    const ids: string[] = [];
    for (const item of window.streamMessages.flat()) {
      const at = ids.indexOf(item.conversation.id);
      if (item.deleted) {
        if (at >= 0) ids.splice(at, 1);
      } else if (at < 0) ids.push(item.conversation.id);
    }
    return ids;
  });

/** The store's conversation ids, from the identifier snapshot. */
export const storeIds = (page: Page) =>
  page.evaluate(async () => {
    const body = (await (await fetch('http://localhost:1000/conversations/identifiers')).json()) as { iterable: { id: string }[] };
    return body.iterable.map((i) => i.id);
  });

/**
 * Calls every operation of the route table from the page (GETs through
 * XMLHttpRequest, POSTs through fetch) and returns each one's status by name.
 */
export const callEveryOperation = (page: Page) =>
  page.evaluate(async () => {
    const base = 'http://localhost:1000';
    const statuses: Record<string, number> = {};
    const failures: Record<string, string> = {};
    const xhr = (path: string, headers: Record<string, string> = {}) =>
      new Promise<{ status: number; body: unknown }>((resolve, reject) => {
        const request = new XMLHttpRequest();
        request.open('GET', base + path);
        for (const [name, value] of Object.entries(headers)) request.setRequestHeader(name, value);
        request.onload = () => {
          const json = (request.getResponseHeader('content-type') ?? '').includes('json');
          resolve({ status: request.status, body: json ? JSON.parse(request.responseText) : request.responseText });
        };
        request.onerror = () => reject(new Error(`XHR ${path} failed`));
        request.send();
      });
    const get = async (name: string, path: string, headers?: Record<string, string>) => {
      const { status, body } = await xhr(path, headers);
      statuses[name] = status;
      return body as Record<string, any>;
    };
    const post = async (name: string, path: string, body?: unknown) => {
      const response = await fetch(base + path, {
        method: 'POST',
        ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
      });
      statuses[name] = response.status;
      const json = (response.headers.get('content-type') ?? '').includes('json');
      const answer = (json ? await response.json() : { text: await response.text() }) as Record<string, any>;
      if (response.status >= 400) failures[name] = String(answer.text);
      return answer;
    };
    const stream = { 'X-Pieces-Stream': 'handshake' };
    await get('getWellKnownHealth', '/.well-known/health');
    await get('getWellKnownVersion', '/.well-known/version');
    await get('getWellKnownStreamHealth', '/.well-known/stream/health', stream);
    const registered = await post('applicationsRegister', '/applications/register');
    // The Application itself: the snapshot's engagement figures are not one of its fields.
    const { engagement: _engagement, ...application } = registered;
    await post('connect', '/connect', {
      application: { name: application.name, version: application.version, platform: application.platform },
    });
    await get('userSnapshot', '/user');
    await get('streamUser', '/user/stream', stream);
    await post('applicationUpdate', '/application/update', application);
    await get('applicationsSnapshot', '/applications');
    await get('applicationsSpecificApplicationSnapshot', `/applications/${application.id}`);
    await get('applicationsExternalSnapshot', '/applications/external');
    await get('applicationsExternalRelated', '/applications/external/related');
    await get('applicationsStreamIdentifiers', '/applications/stream/identifiers', stream);
    const session = await post('applicationsSessionOpen', '/applications/session/open');
    await get('applicationsSessionSnapshot', `/applications/sessions/${session.id}`);
    await post('applicationsSessionClose', '/applications/session/close', session.id);
    await post('applicationsUsageEngagementInteraction', '/applications/usage/engagement/interaction', { description: 'clicked' });
    await post('applicationsUsageEngagementKeyboard', '/applications/usage/engagement/keyboard', {
      description: 'typed',
      shortcut: [17, 67],
    });
    await post('applicationsUsageInstallation', '/applications/usage/installation', { application });
    await post('postApplicationsUsageUpdated', '/applications/usage/updated', { current: application });
    const conversation = await post('conversationsCreateSpecificConversation', '/conversations/create', {
      type: 'COPILOT',
      name: 'every operation',
    });
    await post('conversationUpdate', '/conversation/update', { ...conversation, name: 'every operation, renamed' });
    await get('conversationGetSpecificConversation', `/conversation/${conversation.id}`);
    await post('conversationSpecificConversationRename', `/conversation/${conversation.id}/rename`);
    const message = await post('messagesCreateSpecificMessage', '/messages/create', {
      role: 'USER',
      fragment: { string: { raw: 'How do I debounce?' } },
      conversation: { id: conversation.id },
    });
    await get('messagesSnapshot', '/messages');
    await get('messageSpecificMessageSnapshot', `/message/${message.id}`);
    await post('messageSpecificMessageUpdate', '/message/update', message);
    await post('messageUpdateValue', '/message/update/value', { ...message, fragment: { string: { raw: 'How do I throttle?' } } });
    await get('conversationSpecificConversationMessages', `/conversation/${conversation.id}/messages`);
    await get('conversationMessagesStreamIdentifiers', '/messages/stream/identifiers', stream);
    await post('messagesDeleteSpecificMessage', `/messages/${message.id}/delete`);
    await post('searchConversations', '/conversations/search', { engines: { iterable: [{ query: 'every' }] } });
    await post('relevance', '/qgpt/relevance', { query: 'debounce' });
    await post('question', '/qgpt/question', { query: 'How do I debounce?', relevant: { iterable: [] } });
    // The copilot stream is a socket: answered (200) once its first frame arrives.
    statuses.qgptStream = await new Promise<number>((resolve) => {
      const socket = new WebSocket('ws://localhost:1000/qgpt/stream');
      socket.onopen = () =>
        socket.send(JSON.stringify({ request: 'every', question: { query: 'How do I debounce?', relevant: { iterable: [] } } }));
      socket.onmessage = () => {
        socket.close();
        resolve(200);
      };
      socket.onerror = () => resolve(0);
    });
    const assets = await get('assetsIdentifiersSnapshot', '/assets/identifiers');
    const asset = assets.iterable[0].id as string;
    await get('assetsSnapshot', '/assets');
    await get('assetsSpecificAssetSnapshot', `/assets/${asset}`);
    await get('assetSnapshot', `/asset/${asset}`);
    await get('assetsStreamIdentifiers', '/assets/stream/identifiers', stream);
    // The last streams of assets and what hangs on them: their handshakes (the first frame).
    await get('streamAssets', '/assets/stream', stream);
    await get('getAssetsStreamTransferables', '/assets/stream/transferables', stream);
    await get('formatsStreamIdentifiers', '/formats/stream/identifiers', stream);
    await get('annotationsStreamIdentifiers', '/annotations/stream/identifiers', stream);
    await post('conversationAssociateAsset', `/conversation/${conversation.id}/assets/associate/${asset}`);
    await post('conversationDisassociateAsset', `/conversation/${conversation.id}/assets/disassociate/${asset}`);
    await post('relevance', '/qgpt/relevance', { query: 'debounce a function' });
    await post('question', '/qgpt/question', { query: 'How do I debounce a function?', relevant: { iterable: [] } });
    // The copilot stream is a socket: a question sent, answered until COMPLETED.
    statuses.qgptStream = await new Promise<number>((resolve) => {
      const socket = new WebSocket('ws://localhost:1000/qgpt/stream');
      socket.onopen = () =>
        socket.send(JSON.stringify({ question: { query: 'How do I debounce a function?', relevant: { iterable: [] } } }));
      socket.onmessage = (event) => {
        if ((JSON.parse(event.data) as { status?: string }).status === 'COMPLETED') {
          socket.close();
          resolve(200);
        }
      };
      socket.onerror = () => resolve(0);
    });
    // Assets written, and what hangs on them.
    const made = await post('assetsCreateNewAsset', '/assets/create', {
      type: 'SEEDED_ASSET',
      asset: {
        application,
        format: { fragment: { string: { raw: 'export const every = true;' } } },
        metadata: { tags: [{ text: 'every' }], websites: [{ url: 'https://example.test/every', name: 'every' }] },
      },
    });
    await post('assetsDraft', '/assets/draft', {
      type: 'SEEDED_ASSET',
      asset: { application, format: { fragment: { string: { raw: 'x = 1' } } } },
    });
    await post('assetUpdate', '/asset/update', { ...made, name: 'every.ts' });
    await get('assetFormats', `/asset/${made.id}/formats`);
    await get('assetsSpecificAssetFormatsSnapshot', `/assets/${made.id}/formats`);
    const format = await get('formatSnapshot', `/format/${made.original.id}?transferable=true`);
    await post('formatUpdateValue', '/format/update/value', { ...format, fragment: { string: { raw: 'export const every = 1;' } } });
    const tag = made.tags.iterable[0].id as string;
    const site = made.websites.iterable[0].id as string;
    await get('tagsSpecificTagSnapshot', `/tag/${tag}`);
    await get('websitesSpecificWebsiteSnapshot', `/website/${site}`);
    await post('assetDisassociateTag', `/asset/${made.id}/tags/disassociate/${tag}`);
    await post('assetAssociateTag', `/asset/${made.id}/tags/associate/${tag}`);
    await post('assetDisassociateWebsite', `/asset/${made.id}/websites/disassociate/${site}`);
    await post('assetAssociateWebsite', `/asset/${made.id}/websites/associate/${site}`);
    const note = await post('annotationsCreateNewAnnotation', '/annotations/create', { type: 'COMMENT', text: 'every', asset: made.id });
    await get('annotationSpecificAnnotationSnapshot', `/annotation/${note.id}`);
    await post('annotationUpdate', '/annotation/update', { ...note, text: 'every, again' });
    await get('annotationsSnapshot', '/annotations');
    await post('annotationsDeleteSpecificAnnotation', `/annotations/${note.id}/delete`);
    await get('fullTextSearch', '/search/full_text?query=every');
    await get('neuralCodeSearch', '/search/neural_code?query=every');
    await get('searchAssets', '/assets/search?query=every');
    await get('activitiesSnapshot', '/activities');
    await get('activitiesStreamIdentifiers', '/activities/stream/identifiers', stream);
    // Tags and websites on their own: made on the asset, listed, streamed, found, searched, updated, scored, deleted.
    const ownTag = await post('tagsCreateNewTag', '/tags/create', { text: 'every tag', asset: made.id });
    await get('tagsSnapshot', '/tags');
    await get('tagsStreamIdentifiers', '/tags/stream/identifiers', stream);
    await post('tagsExists', '/tags/exists', { value: 'every tag' });
    await post('searchTags', '/tags/search', { engines: { iterable: [{ query: 'every' }] } });
    await post('tagUpdate', '/tag/update', { ...ownTag, text: 'every tag, again' });
    await post('tagScoresIncrement', `/tag/${ownTag.id}/scores/increment`, { tag: { reuse: true } });
    await post('tagsDeleteSpecificTag', `/tags/${ownTag.id}/delete`);
    const ownSite = await post('websitesCreateNewWebsite', '/websites/create', {
      url: 'https://example.test/own',
      name: 'own',
      asset: made.id,
    });
    await get('websitesSnapshot', '/websites');
    await get('websitesStreamIdentifiers', '/websites/stream/identifiers', stream);
    await post('websitesExists', '/websites/exists', { value: 'https://example.test/own' });
    await post('searchWebsites', '/websites/search', { engines: { iterable: [{ query: 'own' }] } });
    await post('websiteUpdate', '/website/update', { ...ownSite, name: 'own, again' });
    await post('websiteScoresIncrement', `/website/${ownSite.id}/scores/increment`, { website: { reuse: true } });
    await post('websitesDeleteSpecificWebsite', `/websites/${ownSite.id}/delete`);
    await post('assetsDeleteAsset', `/assets/${made.id}/delete`);
    // Models: the catalogue, one model, its stream and download socket, a download, a cancel, a delete.
    const models = await get('modelsSnapshot', '/models');
    const local = (models.iterable as Array<{ id: string; cloud: boolean }>).find((m) => !m.cloud)!.id;
    await get('modelsSpecificModelSnapshot', `/model/${local}`);
    await get('modelsStreamIdentifiers', '/models/stream/identifiers', stream);
    statuses.modelSpecificModelDownloadProgress = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`ws://localhost:1000/model/${local}/download/progress`);
      socket.onopen = () => {
        socket.close();
        resolve(200);
      };
      socket.onerror = () => resolve(0);
    });
    await post('modelSpecificModelDownload', `/model/${local}/download`);
    await post('modelSpecificModelDownloadCancel', `/model/${local}/download/cancel`);
    await post('modelsDeleteSpecificModelCache', `/models/${local}/delete/cache`, {});
    // Custom models, load and unload, the model runtimes, the OpenAI list, a user's OpenAI key. The page
    // configures no Ollama, Foundry or OpenAI endpoint: what needs one is answered 501 naming it, an
    // install or update none made 404, which is what they are for.
    const answered = async (name: string, method: string, path: string, status: number, says: string, body?: unknown) => {
      const response = await fetch(base + path, {
        method,
        ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
      });
      const text = await response.text();
      statuses[name] = response.status === status && text.includes(says) ? 200 : response.status;
      if (statuses[name] !== 200) failures[name] = text;
    };
    const custom = await post('modelsCreateNewModel', '/models/create', {
      version: '1',
      created: { value: '2026-01-01T00:00:00.000Z' },
      name: 'every',
      cloud: false,
      type: 'BALANCED',
      usage: 'CODE_CONVERSATION',
      downloaded: true,
    });
    await post('modelUpdate', '/model/update', { ...custom, name: 'every, again' });
    await post('modelScoresIncrement', `/model/${custom.id}/scores/increment`, { model: { reuse: true } });
    await post('modelSpecificModelLoad', `/model/${custom.id}/load`);
    await post('modelSpecificModelUnload', `/model/${custom.id}/unload`);
    await post('unloadModels', '/models/unload');
    await post('modelsDeleteSpecificModel', `/models/${custom.id}/delete`);
    for (const [runtime, name] of [
      ['ollama', 'Ollama'],
      ['foundry', 'Foundry'],
    ] as const) {
      await get(`${runtime}StatusCheck`, `/${runtime}/status`);
      await get(`${runtime}StatusCheckStream`, `/${runtime}/status/stream`, stream);
      await get(`${runtime}InstallsSnapshot`, `/${runtime}/installs`);
      await get(`${runtime}UpdatesSnapshot`, `/${runtime}/updates`);
      const none = runtime === 'ollama' ? 'no Ollama is configured' : 'this host has no Foundry Local';
      await answered(`${runtime}Install`, 'POST', `/${runtime}/install`, 501, none);
      await answered(`${runtime}Update`, 'POST', `/${runtime}/update`, 501, none, { version: '1' });
      await answered(`${runtime}Uninstall`, 'POST', `/${runtime}/uninstall`, 501, none, { version: '1' });
      await answered(`${runtime}InstallSnapshot`, 'GET', `/${runtime}/install/every`, 404, `No ${name} install`);
      await answered(`${runtime}InstallCancel`, 'POST', `/${runtime}/install/every/cancel`, 404, `No ${name} install`);
      await answered(`${runtime}UpdateSnapshot`, 'GET', `/${runtime}/update/every`, 404, `No ${name} update`);
      await answered(`${runtime}UpdateCancel`, 'POST', `/${runtime}/update/every/cancel`, 404, `No ${name} update`);
    }
    await answered('openAiModelsList', 'POST', '/open_ai/models/list', 501, 'no OpenAI-compatible endpoint', { user: 'every' });
    await post('externalProviderApiKeyCreate', '/external_provider/api_key/create', { user: 'every', open_AI: { api_key: 'sk-every' } });
    await post('externalProviderApiKeyUpdate', '/external_provider/api_key/update', { user: 'every', open_AI: { api_key_name: 'every' } });
    await post('externalProviderApiKeyDelete', '/external_provider/api_key/delete', { user: 'every' });
    // Anchors, ranges, the OS, allocations, the vision status.
    const anchor = await post('anchorsCreateNewAnchor', '/anchors/create', { type: 'FILE', fullpath: '/every/operation.ts' });
    await get('anchorsSnapshot', '/anchors');
    await get('anchorSpecificAnchorSnapshot', `/anchor/${anchor.id}`);
    await get('anchorsStreamIdentifiers', '/anchors/stream/identifiers', stream);
    await post('anchorAssociateConversation', `/anchor/${anchor.id}/conversations/associate/${conversation.id}`);
    await post('anchorDisassociateConversation', `/anchor/${anchor.id}/conversations/disassociate/${conversation.id}`);
    await post('conversationAssociateAnchor', `/conversation/${conversation.id}/anchors/associate/${anchor.id}`);
    await post('conversationDisassociateAnchor', `/conversation/${conversation.id}/anchors/disassociate/${anchor.id}`);
    await post('anchorAssociateAsset', `/anchor/${anchor.id}/assets/associate/${asset}`);
    await post('anchorDisassociateAsset', `/anchor/${anchor.id}/assets/disassociate/${asset}`);
    await post('assetAssociateAnchor', `/asset/${asset}/anchors/associate/${anchor.id}`);
    await post('assetDisassociateAnchor', `/asset/${asset}/anchors/disassociate/${anchor.id}`);
    await post('anchorsDeleteSpecificAnchor', `/anchors/${anchor.id}/delete`);
    await get('rangesSnapshot', '/ranges');
    await get('rangesStreamIdentifiers', '/ranges/stream/identifiers', stream);
    // No range exists: its read answers a 404 naming the range, which is what it is for.
    const range = await xhr(`/range/00000000-0000-4000-8000-000000000000`);
    statuses.rangesSpecificRangeSnapshot = range.status === 404 && /^No range with id/.test(String(range.body)) ? 200 : range.status;
    await post('signOutOfOS', '/os/sign_out');
    const profile = await post('signIntoOS', '/os/sign_in');
    await post('osAppletLaunch', '/os/applet/launch', { type: 'COPILOT' });
    await get('osSettingsSnapshot', '/os/settings');
    await post('osSettingsUpdate', '/os/settings/update', { autoboot: true });
    await get('osSettingsStream', '/os/settings/stream', stream);
    await get('osPermissions', '/os/permissions');
    await post('osPermissionsRequest', '/os/permissions/request', { processing: { vision: true } });
    await get('osDeviceInformation', '/os/device/information');
    await get('osMetadata', '/os/metadata');
    // Classification, machine learning, discovery, the copilot's helpers, the connector's extras, asset sources, notifications.
    const snippet = { fragment: { string: { raw: 'export const every = () => 1;' } } };
    await post('convertGenericClassification', '/classification/generic/convert', snippet);
    await post('segmentTechnicalLanguage', '/machine_learning/text/technical_language/parsers/segmentation?classify=true', {
      value: 'Every:\n\n```ts\nconst every = 1;\n```',
    });
    await post('personificationTechnicalLanguageGeneration', '/machine_learning/text/technical_language/generators/personification', {
      languages: ['ts'],
    });
    await post('discoveryDiscoverAssets', '/discovery/discover/assets', { application: application.id, iterable: [snippet] });
    await post('discoveryDiscoverAssetsHtml', '/discovery/discover/assets/html', {
      application: application.id,
      iterable: [{ url: 'https://example.test/every', page: '<pre>const every = 1;</pre>' }],
    });
    await post('discoveryDiscoverSensitives', '/discovery/discover/sensitives', {
      application: application.id,
      iterable: [{ asset, text: 'const key = "AKIAIOSFODNN7EXAMPLE";' }],
    });
    await post('discoveryDiscoverTagsRelated', '/discovery/discover/tags/related', {
      application: application.id,
      iterable: [{ asset, text: 'every' }],
    });
    await post('tagBasedSearch', '/search/tag_based', { iterable: [{ text: 'every' }] });
    await post('hints', '/qgpt/hints', { relevant: { iterable: [{ asset: { id: asset } }] } });
    const dialog = { iterable: [{ text: 'How do I debounce?', role: 'USER', timestamp: { value: '2026-01-01T00:00:00.000Z' } }] };
    await post('reprompt', '/qgpt/reprompt', { query: 'And test it?', conversation: dialog });
    await post('personsRelated', '/qgpt/persons/related', { conversation: dialog });
    await post('intention', `/${application.id}/intention`, { format: snippet });
    await post('onboarded', `/${application.id}/onboarded`, true);
    await post('suggest', `/${application.id}/suggestion`, { asset: { format: snippet } });
    await post('react', `/${application.id}/reaction`, { save: false, seed: { asset: { format: snippet } } });
    await post('track', `/${application.id}/track`, { interaction: { description: 'every operation' } });
    await post('assetsCreateNewAssetFromMacos', '/macos/assets/create', { value: 'echo every' });
    await post('assetsCreateUltraSuiteAsset', '/ultra_suite/assets/create', {
      ext: 'rb',
      format: { fragment: { string: { raw: 'puts 1' } } },
    });
    await post('workstreamSuggestionsRefresh', '/workstream/suggestions/refresh', { application, query: 'every' });
    await get('workstreamSuggestionsStream', '/workstream/suggestions/stream', stream);
    await get('streamAppletVersion', '/os/applet/version/stream?applet_type=COPILOT', stream);
    // A page the user has not allowed notifications answers 403 naming how to ask, which is what it is for.
    statuses.sendLocalNotification = await fetch(`${base}/notifications/local/send`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ id: 1, title: 'every' }),
    }).then(async (response) => (response.status === 403 && /requestPermission/.test(await response.text()) ? 200 : response.status));
    // Backups, the database's export and import, shares, links and distributions.
    const kept = await post('backupsCreateNewBackup', '/backups/create', {});
    await get('backupsSnapshot', '/backups');
    await get('backupSpecificBackupSnapshot', `/backup/${kept.id}`);
    await get('backupSpecificCreationStatus', `/backup/${kept.id}/creation/status`);
    await post('backupSpecificCreationCancel', `/backup/${kept.id}/creation/cancel`);
    await post('backupsCreateNewBackupStreamed', '/backups/create/streamed', {});
    await get('backupsStreamedProgress', '/backups/streamed/progress');
    for (const [name, path] of [
      ['backupsCreateNewBackupStreamedWebsocket', '/backups/create/streamed/websocket'],
      ['backupRestoreSpecificBackupStreamedWebsocket', `/backup/${kept.id}/restore/streamed/websocket`],
    ] as const) {
      statuses[name] = await new Promise<number>((resolve) => {
        const socket = new WebSocket(`ws://localhost:1000${path}`);
        socket.onopen = () => {
          socket.close();
          resolve(200);
        };
        socket.onerror = () => resolve(0);
      });
    }
    await post('backupAsset', '/backup/asset', { id: asset });
    await post('backup', '/backup', { iterable: [{ id: asset }] });
    await post('backupRestoreSpecificBackup', `/backup/${kept.id}/restore`, kept);
    await post('backupRestoreSpecificBackupStreamed', `/backup/${kept.id}/restore/streamed`, kept);
    await get('backupSpecificRestorationStatus', `/backup/${kept.id}/restoration/status`);
    await post('backupSpecificRestorationCancel', `/backup/${kept.id}/restoration/cancel`, kept);
    const exported = await get('databaseExport', '/database/export');
    await post('databaseImport', '/database/import', exported);
    await post('backupsDeleteSpecificBackup', `/backups/${kept.id}/delete`, kept);
    const whole = await get('assetSnapshot', `/asset/${asset}`);
    const [share] = (await post('sharesCreateNewShare', '/shares/create', { asset: whole, access: 'PUBLIC' })).iterable;
    await get('sharesSnapshot', '/shares');
    await get('shareSnapshot', `/share/${share.id}`);
    await get('sharesSpecificShareSnapshot', `/shares/${share.id}`);
    await post('shareUpdate', '/share/update', { ...share, name: 'Grüße ✓' });
    await post('shareScoresIncrement', `/share/${share.id}/scores/increment`, { share: { reuse: true } });
    await get('htmlShare', `/?p=${share.short}`);
    const linked = await post('linkify', '/linkify', { asset: whole, access: 'PUBLIC', distributions: { iterable: [{}] } });
    const [distribution] = linked.iterable[0].distributions.iterable;
    await get('distributionsSnapshot', '/distributions');
    await get('distributionsSpecificDistributionSnapshot', `/distribution/${distribution.id}`);
    await post('distributionUpdate', '/distribution/update', distribution);
    await post('distributionsDeleteSpecificDistribution', `/distributions/${distribution.id}/delete`);
    // A distribution alone names no share: refused (400), which is what it answers.
    const alone = await fetch(`${base}/distributions/create`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    statuses.distributionsCreateNewDistribution = alone.status === 400 ? 200 : alone.status;
    await post('linkifyMultiple', '/linkify/multiple', { assets: [asset], access: 'PRIVATE' });
    await post('linkifyShareRevoke', `/linkify/${linked.iterable[0].id}/revoke`);
    await post('sharesDeleteShare', `/shares/${share.id}/delete`);
    const allocation = await post('allocationsConnectNewCloud', '/allocations/connect', profile);
    // The local identity: the allocation as a record, the profile, the users, PKCE and Auth0.
    await get('allocationsSnapshot', '/allocations');
    await get('allocationSnapshot', `/allocation/${allocation.id}`);
    await post('allocationUpdate', '/allocation/update', { ...allocation, project: 'every-operation' });
    await post('allocationsReconnectCloud', '/allocations/reconnect', allocation);
    await post('updateUser', '/user/update', { ...profile, name: 'Every operation' });
    await post('userUpdateVanity', '/user/update/vanity', { ...profile, vanityname: 'every-operation' });
    await post('userBetaStatus', '/user/beta/status', { user: profile.id });
    await get('userProviders', '/user/providers');
    await get('refreshUser', '/user/refresh');
    await get('userAccessToken', '/user/access_token');
    await post('selectUser', '/user/select', { user_id: profile.id });
    await get('usersSnapshot', '/users');
    await get('usersSpecificUserSnapshot', `/users/${profile.id}`);
    const flow = (await get('getChallenge', '/pkce/challenge')).challenge;
    const seed = {
      response_type: 'code',
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: flow.challenge,
      code_challenge_method: 'S256',
    };
    const code = (await post('generateCode', '/pkce/code', { ...seed, scope: ['openid'], client_id: 'every' })).result;
    await post('respondWithCode', '/pkce/response/code', { code: code.code, state: code.state });
    const tokenized = {
      grant_type: 'authorization_code',
      client_id: 'every',
      code: code.code,
      redirect_uri: '',
      code_verifier: flow.verifier,
    };
    await post('generateToken', '/pkce/token', tokenized);
    await post('clearPKCE', '/pkce/clear');
    const again = (await get('getChallenge', '/pkce/challenge')).challenge;
    const authorize = `audience=every&scope=openid+email&response_type=code&client_id=every&code_challenge_method=S256&code_challenge=${again.challenge}&response_mode=query&connection=github`;
    const authorized = await get('authorizeAuth0', `/authorize?${authorize}`);
    const token = await post('exchangeForAuth0Token', '/oauth/token', {
      ...tokenized,
      code: authorized.code,
      code_verifier: again.verifier,
    });
    await get('getAuth0UserInfo', '/userinfo', { Authorization: `Bearer ${token.access_token}` });
    await post('authenticateFromOauthToken', '/users/authenticate/from_token', token);
    await post('usersDisconnectUser', `/users/${profile.id}/disconnect`);
    await post('signIntoOS', '/os/sign_in');
    await get('auth0Logout', '/v2/logout?client_id=every');
    await post('clearUser', '/user/clear');
    await post('signIntoOS', '/os/sign_in');
    statuses.allocationsDisconnectCloud = (
      await fetch(`${base}/allocations/disconnect`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(allocation),
      })
    ).status;
    await get('workstreamPatternEngineProcessorsVisionStatus', '/workstream_pattern_engine/processors/vision/status');
    await get('workstreamPatternEngineProcessorsVisionStatusStream', '/workstream_pattern_engine/processors/vision/status/stream', stream);
    // The workstream pattern engine: switched on, an event ingested (and its vision event), read, searched, summarized, deleted.
    const wpe = '/workstream_pattern_engine/processors';
    await post('workstreamPatternEngineProcessorsVisionActivate', `${wpe}/vision/activate`, {
      vision: { activation: { continuous: true } },
    });
    await post('workstreamPatternEngineCreateIngestion', '/workstream_pattern_engine/ingestions/create', {
      event: {
        application: {
          id: '0b5a4c6e-8f3d-4e2a-9c71-5d2e8f1a3b40',
          name: 'VS_CODE',
          version: '1',
          platform: 'LINUX',
          onboarded: true,
          privacy: 'OPEN',
        },
        trigger: { check_in: true },
        context: {
          native_ocr: {
            ocrText: 'every operation',
            ocrTextHash: 'h',
            appTitle: 'Code',
            windowTitle: 'every.ts',
            isMerged: false,
            isCached: false,
          },
        },
      },
    });
    await get('workstreamPatternEngineProcessorsSources', `${wpe}/sources`);
    await get('workstreamPatternEngineProcessorsVisionMetadata', `${wpe}/vision/metadata`);
    const seen = await get('workstreamPatternEngineProcessorsVisionEventsSnapshot', `${wpe}/vision/data/events`);
    const visionEvent = (seen.iterable as Array<{ id: string }>)[0]!.id;
    await get('workstreamPatternEngineProcessorsVisionEventsSpecificSnapshot', `${wpe}/vision/data/events/${visionEvent}`);
    await post('workstreamPatternEngineProcessorsVisionEventsSearch', `${wpe}/vision/data/events/search`, {
      engines: { iterable: [{ query: 'every' }] },
    });
    await post('workstreamPatternEngineProcessorsVisionCalibrationCapture', `${wpe}/vision/calibration/capture`);
    await get('workstreamPatternEngineProcessorsVisionCalibrationsSnapshot', `${wpe}/vision/calibrations`);
    await get('workstreamPatternEngineProcessorsVisionCalibrationsFocused', `${wpe}/vision/calibrations/focused`);
    const wsSummary = await post('workstreamSummariesCreateAutogeneratedWorkstreamSummary', '/workstream_summaries/create/summary', {
      anonymous_ranges: [{ from: { value: '2000-01-01T00:00:00.000Z' } }],
    });
    await post('workstreamSummaryRegenerateSpecificSummary', `/workstream_summary/${wsSummary.id}/regenerate/summary`);
    await post('workstreamPatternEngineProcessorsVisionEventsScopedDelete', `${wpe}/vision/data/events/scoped_delete`, {
      search_scope: { engines: { iterable: [{ query: 'nothing like it' }] } },
    });
    await post('workstreamPatternEngineProcessorsVisionEventDeleteSpecificVisionEvent', `${wpe}/vision/data/events/${visionEvent}/delete`);
    await post('workstreamPatternEngineProcessorsVisionDataClear', `${wpe}/vision/data/clear`, { ranges: [] });
    await post('workstreamPatternEngineProcessorsVisionDeactivate', `${wpe}/vision/deactivate`, {});
    // The rest of the hand-written kinds' operations: scores, activities, formats and analyses, asset reads, searches.
    const query = { engines: { iterable: [{ query: 'every' }] } };
    const activity = await post('activitiesCreateNewActivity', '/activities/create', {
      event: { interaction: { description: 'every' } },
      application,
    });
    await get('activitiesSpecificActivitySnapshot', `/activity/${activity.id}`);
    await get('activityIdentifiersSnapshot', '/activity/identifiers?activity_filter_enum=CREATED');
    await post('activityUpdate', '/activity/update', { ...activity, mechanism: 'AUTOMATIC' });
    await post('activitiesDeleteSpecificActivity', `/activities/${activity.id}/delete`);
    await get('assetSpecificAssetActivities', `/asset/${asset}/activities`);
    await post('assetSnapshotPost', `/asset/${asset}`, { os: 'every', share: 'every' });
    await get('assetSpecificAssetConversations', `/asset/${asset}/conversations`);
    await get('assetSpecificAssetExport', `/asset/${asset}/export?export_type=MD`);
    await post('assetScoresIncrement', `/asset/${asset}/scores/increment`, { asset: { reuse: true } });
    await get('assetsPseudoSnapshot', '/assets/pseudo');
    await get('assetsGetRecommendedAssets', '/assets/recommended');
    await get('assetsGetRelatedAssets', '/assets/related');
    await post('assetsSearchWithFilters', '/assets/search', { query: 'every', filters: { iterable: [{ classification: 'ts' }] } });
    const formats = await get('formatsSnapshot', '/formats');
    const first = formats.iterable[0];
    await get('formatsSpecificFormatSnapshot', `/formats/${first.id}`);
    await get('formatAnalysis', `/format/${first.id}/analysis`);
    await post('formatReclassify', '/format/reclassify', { ext: first.classification.specific, format: { id: first.id } });
    await post('assetReclassify', '/asset/reclassify', { ext: first.classification.specific, asset: { id: first.asset.id } });
    await get('analysesSnapshot', '/analyses');
    await get('codeAnalysesSnapshot', '/code_analyses');
    await get('imageAnalysesSnapshot', '/image_analyses');
    await get('ocrAnalysesSnapshot', '/ocr_analyses');
    await get('getMetricsFormats', '/metrics/formats');
    await get('metricsFormatsOrdered', '/metrics/formats/ordered');
    await get('relationshipsSnapshot', '/relationships');
    // No relationship is ever made here: its read answers a 404 naming it, which is what it is for.
    const relationship = await xhr('/relationship/00000000-0000-4000-8000-000000000000');
    statuses.relationshipsSpecificRelationshipSnapshot =
      relationship.status === 404 && /^No relationship with id/.test(String(relationship.body)) ? 200 : relationship.status;
    const pinned = await post('anchorsCreateNewAnchor', '/anchors/create', { type: 'FILE', fullpath: '/every/pinned.ts' });
    await post('anchorUpdate', '/anchor/update', { id: pinned.id, name: 'pinned' });
    await post('anchorRename', `/anchor/${pinned.id}/rename`);
    await post('anchorScoresIncrement', `/anchor/${pinned.id}/scores/increment`, { anchor: { reuse: true } });
    await post('searchAnchors', '/anchors/search', query);
    const remark = await post('annotationsCreateNewAnnotation', '/annotations/create', { type: 'COMMENT', text: 'every remark' });
    await post('annotationScoresIncrement', `/annotation/${remark.id}/scores/increment`, { annotation: { reuse: true } });
    await post('searchAnnotations', '/annotations/search', query);
    const said = await post('messagesCreateSpecificMessage', '/messages/create', {
      role: 'USER',
      fragment: { string: { raw: 'every message' } },
      conversation: { id: conversation.id },
    });
    await post('messageScoresIncrement', `/message/${said.id}/scores/increment`, { conversationMessage: { reuse: true } });
    await post('searchMessages', '/messages/search', query);
    await post('searchConversationSpecificMessages', `/conversation/${conversation.id}/search`, query);
    await post('conversationScoresIncrement', `/conversation/${conversation.id}/scores/increment`, { conversation: { reuse: true } });
    await post('conversationSpecificConversationPrepare', `/conversation/${conversation.id}/prepare`);
    await post('conversationSummarize', `/conversation/${conversation.id}/summarize`, {});
    await post('applicationsBulkUpdateApplicationCapabilities', '/applications/update/capabilities', { capabilities: 'LOCAL' });
    const summary = await post('workstreamSummariesCreateNewWorkstreamSummary', '/workstream_summaries/create', {
      name: 'every summary',
      model: (models.iterable as Array<Record<string, unknown>>)[0],
    });
    await post('conversationsCreateFromWorkstreamSummary', `/conversations/create/from_workstream_summary/${summary.id}`);
    const fromAsset = await post('conversationsCreateFromAsset', `/conversations/create/from_asset/${asset}`);
    await get('conversationsSnapshot', '/conversations');
    const ids = await get('conversationsIdentifiersSnapshot', '/conversations/identifiers');
    await get('conversationsStreamIdentifiers', '/conversations/stream/identifiers', stream);
    await post('conversationsDeleteSpecificConversation', `/conversations/${fromAsset.conversation.id}/delete`);
    const after = await get('conversationsIdentifiersSnapshot', '/conversations/identifiers');
    return {
      statuses,
      failures,
      created: conversation.id as string,
      listed: (ids.iterable as { id: string }[]).map((i) => i.id),
      deleted: fromAsset.conversation.id as string,
      remaining: (after.iterable as { id: string }[]).map((i) => i.id),
    };
  });

/** A launcher whose browsers are closed after each test of the file that calls it. */
export function contextPerTest(): () => Promise<BrowserContext> {
  const contexts: BrowserContext[] = [];
  afterEach(async () => {
    while (contexts.length) await contexts.pop()!.close();
  });
  return async () => {
    const { context } = await launch();
    contexts.push(context);
    return context;
  };
}
