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
    statuses.allocationsDisconnectCloud = (
      await fetch(`${base}/allocations/disconnect`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(allocation),
      })
    ).status;
    await get('workstreamPatternEngineProcessorsVisionStatus', '/workstream_pattern_engine/processors/vision/status');
    await get('workstreamPatternEngineProcessorsVisionStatusStream', '/workstream_pattern_engine/processors/vision/status/stream', stream);
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
