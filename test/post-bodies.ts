/**
 * A valid body of every operation of the SDK that reads one, and the operations that read none:
 * the bodies matrix of every browser engine (test/browser/bodies.test.ts) and the unit suite's
 * body limit check of every operation (test/unit/api/body-limit.test.ts) post them.
 */
import { OPERATIONS } from '../src/core/routes.js';
import { LINK_OPERATIONS } from '../src/core/handlers/links.js';
import { GENERIC_RELATIONS, MATERIAL_OPERATIONS } from '../src/core/handlers/materials.js';
import { KINDS } from '../src/shared/graph.js';

export const APP = {
  id: '0b5a4c6e-8f3d-4e2a-9c71-5d2e8f1a3b40',
  name: 'VS_CODE',
  version: '1.2.3',
  platform: 'LINUX',
  onboarded: true,
  privacy: 'OPEN',
};

/**
 * A valid body of every operation that reads one, in the order they are posted;
 * {session}, {conversation} and {message} stand for ids the page makes first.
 */
export const VALID: Record<string, unknown> = {
  applicationsRegister: APP,
  applicationsSessionClose: '{session}',
  applicationsUsageEngagementInteraction: { description: 'Grüße ✓ 𝄞', element: 'button' },
  applicationsUsageEngagementKeyboard: { description: 'save', shortcut: [17, 83] },
  applicationsUsageInstallation: { application: APP },
  postApplicationsUsageUpdated: { current: { ...APP, version: '1.2.4' }, previous: APP },
  conversationsCreateSpecificConversation: {
    type: 'COPILOT',
    name: 'Grüße ✓ 𝄞',
    messages: [{ role: 'USER', fragment: { string: { raw: 'How do I debounce a function? ✓' } } }],
  },
  connect: { application: { name: 'VS_CODE', version: '1.96.0', platform: 'LINUX' } },
  applicationUpdate: { ...APP, version: '1.3.0' },
  conversationUpdate: {
    id: '{conversation}',
    type: 'COPILOT',
    name: 'Grüße ✓ 𝄞',
    favorited: true,
    created: { value: '2026-01-01T00:00:00.000Z' },
  },
  searchConversations: { engines: { iterable: [{ query: 'debounce' }] } },
  messagesCreateSpecificMessage: { role: 'ASSISTANT', fragment: { string: { raw: 'Wrap it ✓' } }, conversation: { id: '{conversation}' } },
  messageSpecificMessageUpdate: { id: '{message}', role: 'USER', fragment: { string: { raw: 'Edited ✓' } }, sentiment: 'LIKE' },
  messageUpdateValue: { id: '{message}', fragment: { string: { raw: 'Edited again ✓' } } },
  // A query that matches nothing: a match would carry the browser's own application, which differs per engine.
  relevance: { query: 'zebra stripes ✓' },
  question: { query: 'How do I debounce a function? ✓', relevant: { iterable: [] } },
  // After the copilot's: these rename and edit the first sample asset, which the question quotes.
  assetsCreateNewAsset: {
    type: 'SEEDED_ASSET',
    asset: { application: APP, format: { fragment: { string: { raw: 'const grüße = "✓ 𝄞";' } } }, metadata: { name: 'grüße.ts' } },
  },
  assetsDraft: {
    type: 'SEEDED_ASSET',
    asset: { application: APP, format: { fragment: { string: { raw: 'def grüße():\n    return "✓"' } } } },
  },
  assetUpdate: { id: '{asset}', name: 'Grüße ✓ 𝄞' },
  formatUpdateValue: { id: '{format}', fragment: { string: { raw: 'edited ✓ 𝄞' } } },
  annotationsCreateNewAnnotation: { type: 'COMMENT', text: 'Grüße ✓ 𝄞', asset: '{asset}' },
  annotationUpdate: { id: '{annotation}', type: 'DESCRIPTION', text: 'Grüße ✓ 𝄞' },
  anchorsCreateNewAnchor: { type: 'FILE', fullpath: '/src/grüße ✓.ts', platform: 'LINUX', conversation: '{conversation}' },
  modelsDeleteSpecificModelCache: { schema: { migration: 0, semantic: 'MAJOR_0_MINOR_0_PATCH_1' } },
  osAppletLaunch: { type: 'COPILOT' },
  osSettingsUpdate: { autoboot: true },
  osPermissionsRequest: { processing: { vision: true } },
  allocationsConnectNewCloud: { id: '{user}', name: 'Grüße ✓', aesthetics: { theme: { dark: false }, font: { size: 1 } } },
  // The generic path reads every kind's bodies through one function (src/core/handlers/materials.ts):
  // the person's operations stand for every generic kind's (see GENERIC_STAND_INS).
  personsCreateNewPerson: { type: { basic: { name: 'Grüße ✓ 𝄞' } } },
  updatePerson: {
    id: '{person}',
    type: { basic: { name: 'Grüße ✓ 𝄞', email: 'ada@example.test' } },
    created: { value: '2026-01-01T00:00:00.000Z' },
    updated: { value: '2026-01-01T00:00:00.000Z' },
  },
  searchPersons: { engines: { iterable: [{ query: 'Grüße' }] } },
  personScoresIncrement: { person: { reuse: true } },
  // Tags and websites on their own ({tag} and {website}: made by the page first).
  tagsCreateNewTag: { text: 'Grüße ✓ 𝄞', asset: '{asset}', category: 'HANDLE' },
  tagUpdate: {
    id: '{tag}',
    text: 'Grüße, again ✓ 𝄞',
    category: 'UNKNOWN',
    created: { value: '2026-01-01T00:00:00.000Z' },
    updated: { value: '2026-01-01T00:00:00.000Z' },
  },
  tagsExists: { value: 'Grüße ✓ 𝄞' },
  searchTags: { engines: { iterable: [{ query: 'Grüße' }] } },
  tagScoresIncrement: { tag: { reuse: true } },
  websitesCreateNewWebsite: { url: 'https://grüße.test/✓', name: 'Grüße ✓ 𝄞', asset: '{asset}' },
  websiteUpdate: {
    id: '{website}',
    url: 'https://grüße.test/again',
    name: 'Grüße, again ✓ 𝄞',
    created: { value: '2026-01-01T00:00:00.000Z' },
    updated: { value: '2026-01-01T00:00:00.000Z' },
  },
  websitesExists: { value: 'https://grüße.test/✓' },
  searchWebsites: { engines: { iterable: [{ query: 'Grüße' }] } },
  websiteScoresIncrement: { website: { reuse: true } },
  // The workstream pattern engine: switched on, so that the ingestion records a vision event too.
  workstreamPatternEngineProcessorsVisionActivate: { vision: { activation: { continuous: true } } },
  workstreamPatternEngineCreateIngestion: {
    event: {
      application: APP,
      trigger: { check_in: true },
      context: {
        native_ocr: { ocrText: 'Grüße ✓ 𝄞', ocrTextHash: 'h', appTitle: 'Code', windowTitle: 'grüße.ts', isMerged: false, isCached: false },
      },
    },
  },
  workstreamPatternEngineProcessorsVisionEventsSearch: { engines: { iterable: [{ query: 'Grüße' }] } },
  // A fixed range with no events in it: the summary's text names the range, not the time of the run.
  workstreamSummariesCreateAutogeneratedWorkstreamSummary: {
    anonymous_ranges: [{ from: { value: '2026-01-01T00:00:00.000Z' }, to: { value: '2026-01-02T00:00:00.000Z' } }],
  },
  workstreamPatternEngineProcessorsVisionEventsScopedDelete: { search_scope: { engines: { iterable: [{ query: 'Grüße' }] } } },
  workstreamPatternEngineProcessorsVisionDataClear: { ranges: [{ from: { value: '2026-01-01T00:00:00.000Z' } }] },
  workstreamPatternEngineProcessorsVisionDeactivate: { vision: { deactivation: { continuous: true } } },
  // Models and their runtimes ({model} in a path or body: Phi-2 CPU of the catalogue).
  modelsCreateNewModel: {
    version: '1',
    created: { value: '2026-01-01T00:00:00.000Z' },
    name: 'Grüße ✓ 𝄞',
    cloud: false,
    type: 'BALANCED',
    usage: 'CODE_CONVERSATION',
  },
  modelUpdate: {
    id: 'a3d8039b-1692-59f8-b0e0-aeb39837af34',
    version: 'phi',
    created: { value: '2026-01-01T00:00:00.000Z' },
    name: 'Grüße ✓ 𝄞',
    cloud: false,
    type: 'BALANCED',
    usage: 'CODE_CONVERSATION',
  },
  modelScoresIncrement: { model: { reuse: true } },
  ollamaUpdate: { version: '0.5.7 ✓' },
  ollamaUninstall: { version: '0.5.7 ✓' },
  foundryUpdate: { version: '1.0 ✓' },
  foundryUninstall: { version: '1.0 ✓' },
  openAiModelsList: { user: 'Grüße ✓' },
  externalProviderApiKeyCreate: { user: 'Grüße ✓', open_AI: { api_key: 'sk-✓', api_key_name: 'Grüße ✓ 𝄞' } },
  externalProviderApiKeyUpdate: { user: 'Grüße ✓', open_AI: { organization_key: 'org-✓' } },
  externalProviderApiKeyDelete: { user: 'Grüße ✓' },
  // The rest of the hand-written kinds' operations ({activity} and {anchor}: made by the page first).
  activitiesCreateNewActivity: { event: { interaction: { description: 'Grüße ✓ 𝄞' } }, application: APP },
  activityUpdate: { id: '{activity}', event: { interaction: { description: 'Grüße ✓' } }, application: APP, mechanism: 'MANUAL' },
  assetSnapshotPost: { os: 'Grüße ✓', share: 'share ✓' },
  assetReclassify: { ext: 'ts', asset: { id: '{asset}' } },
  assetScoresIncrement: { asset: { reuse: true } },
  formatReclassify: { ext: 'ts', format: { id: '{format}' } },
  searchAnchors: { engines: { iterable: [{ query: 'grüße' }] } },
  anchorScoresIncrement: { anchor: { reference: true } },
  anchorUpdate: { id: '{anchor}', name: 'Grüße ✓ 𝄞', watch: true },
  searchAnnotations: { engines: { iterable: [{ query: 'grüße' }] } },
  annotationScoresIncrement: { annotation: { update: true } },
  searchMessages: { engines: { iterable: [{ query: 'first' }] } },
  messageScoresIncrement: { conversationMessage: { reuse: true } },
  searchConversationSpecificMessages: { engines: { iterable: [{ query: 'first' }] } },
  conversationScoresIncrement: { conversation: { searched: true } },
  applicationsBulkUpdateApplicationCapabilities: { capabilities: 'LOCAL' },
  conversationSummarize: { messages: { iterable: [{ id: '{message}' }] } },
  assetsSearchWithFilters: { query: 'grüße', filters: { iterable: [{ phrase: { value: 'Grüße ✓', title: true } }], type: 'OR' } },
  // Classification, machine learning, discovery, the copilot's helpers, the connector's extras, asset sources, notifications.
  convertGenericClassification: { fragment: { string: { raw: 'const grüße = "✓ 𝄞";' } } },
  segmentTechnicalLanguage: { value: 'Grüße ✓ 𝄞\n\n```ts\nconst a = 1;\n```' },
  personificationTechnicalLanguageGeneration: { languages: ['ts'], personas: ['Grüße ✓ 𝄞'] },
  discoveryDiscoverAssets: { application: APP.id, iterable: [{ fragment: { string: { raw: '```py\nprint("✓ 𝄞")\n```' } } }] },
  discoveryDiscoverAssetsHtml: {
    application: APP.id,
    iterable: [{ url: 'https://example.test/grüße', page: '<pre><code class="language-js">const grüße = "✓ 𝄞";</code></pre>' }],
  },
  discoveryDiscoverSensitives: {
    application: APP.id,
    iterable: [{ asset: '{asset}', text: 'const key = "AKIAIOSFODNN7EXAMPLE"; // ✓ 𝄞' }],
  },
  discoveryDiscoverTagsRelated: { application: APP.id, iterable: [{ asset: '{asset}', text: 'Grüße ✓ 𝄞' }] },
  tagBasedSearch: { iterable: [{ text: 'Grüße ✓ 𝄞' }] },
  hints: {
    query: 'Grüße ✓ 𝄞',
    relevant: {
      iterable: [
        { seed: { type: 'SEEDED_ASSET', asset: { application: APP, format: { fragment: { string: { raw: 'const grüße = 1;' } } } } } },
      ],
    },
  },
  reprompt: {
    query: 'And is it ✓?',
    conversation: { iterable: [{ text: 'How do I debounce 𝄞?', role: 'USER', timestamp: { value: '2026-01-01T00:00:00.000Z' } }] },
  },
  personsRelated: { conversation: { iterable: [{ text: 'Grüße ✓ 𝄞', role: 'USER', timestamp: { value: '2026-01-01T00:00:00.000Z' } }] } },
  intention: { format: { fragment: { string: { raw: 'Grüße ✓ 𝄞' } } } },
  onboarded: true,
  // Code that matches no stored asset: the assets made here tie on this file's texts, in an order of their ids (a run's).
  suggest: { asset: { format: { fragment: { string: { raw: 'zebraStripes("✓ 𝄞");' } } } } },
  react: { save: false, seed: { asset: { format: { fragment: { string: { raw: 'Grüße ✓ 𝄞' } } } } } },
  track: { interaction: { description: 'Grüße ✓ 𝄞' } },
  assetsCreateNewAssetFromMacos: { value: 'echo "Grüße ✓ 𝄞"' },
  assetsCreateUltraSuiteAsset: { name: 'grüße.rb', ext: 'rb', format: { fragment: { string: { raw: 'puts "✓ 𝄞"' } } } },
  sendLocalNotification: { id: 1, title: 'Grüße ✓ 𝄞' },
  // A query that matches nothing: the assets made here tie on it, in an order of their ids, which differ per run.
  workstreamSuggestionsRefresh: { application: APP, query: 'zebra stripes ✓' },
  // Backups, shares, links and distributions (the others are bodiless, or read a record made first: test/browser/pages.ts).
  backupsCreateNewBackup: {},
  backupsCreateNewBackupStreamed: {},
  backupAsset: { id: '{asset}' },
  backup: { iterable: [{ id: '{asset}' }] },
  linkifyMultiple: { assets: ['{asset}'], access: 'PUBLIC', name: 'Grüße ✓ 𝄞' },
  linkify: {
    access: 'PUBLIC',
    seed: { type: 'SEEDED_ASSET', asset: { application: APP, format: { fragment: { string: { raw: 'shared ✓ 𝄞' } } } } },
  },
  // ("{wholeAsset}": the sample asset as GET /asset/{asset} answers it.)
  sharesCreateNewShare: { asset: '{wholeAsset}', access: 'PUBLIC', name: 'Grüße ✓ 𝄞' },
  // A distribution is made with its share (linkify): alone, a 400 naming the share; an unknown one's update, a 404.
  distributionsCreateNewDistribution: { mailgun: { recipients: { iterable: [{ email: 'ada@example.test' }] } } },
  distributionUpdate: {
    id: '00000000-0000-4000-8000-000000000000',
    share: {
      id: '00000000-0000-4000-8000-000000000001',
      link: 'http://localhost:1000/?p=0',
      access: 'PUBLIC',
      accessors: { iterable: [] },
      created: { value: '2026-01-01T00:00:00.000Z' },
      short: '0',
    },
    created: { value: '2026-01-01T00:00:00.000Z' },
    updated: { value: '2026-01-01T00:00:00.000Z' },
  },
  allocationsDisconnectCloud: {
    id: APP.id,
    user: APP.id,
    urls: { base: { status: 'DISCONNECTED', url: '' }, id: { status: 'DISCONNECTED', url: '' } },
    status: { cloud: 'DISCONNECTED' },
    project: '',
  },
  // The local identity ({user}: the local user's id). Codes and tokens are made per run: the
  // token exchanges and the callback are answered as refusals of an unknown code, in every engine.
  updateUser: { id: '{user}', name: 'Grüße ✓ 𝄞', aesthetics: { theme: { dark: true }, font: { size: 1 } } },
  userUpdateVanity: { id: '{user}', vanityname: 'grusse', aesthetics: { theme: { dark: true }, font: { size: 1 } } },
  userBetaStatus: { user: '{user}', descope: { vision: { from: { value: '2026-01-01T00:00:00.000Z' } } } },
  selectUser: { email: 'grusse@example.test', name: 'Grüße ✓ 𝄞' },
  authenticateFromOauthToken: { access_token: 'unknown', token_type: 'Bearer', expires_in: 86400 },
  generateCode: {
    response_type: 'code',
    state: 'grüße',
    nonce: 'grüße',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
    scope: ['openid'],
    client_id: 'bodies',
  },
  respondWithCode: { code: 'unknown', state: 'grüße' },
  generateToken: {
    grant_type: 'authorization_code',
    client_id: 'bodies',
    code: 'unknown',
    redirect_uri: '',
    code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
  },
  exchangeForAuth0Token: {
    grant_type: 'authorization_code',
    client_id: 'bodies',
    code: 'unknown',
    redirect_uri: '',
    code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
  },
  allocationUpdate: {
    id: '{user}',
    user: '{user}',
    urls: { base: { status: 'DISCONNECTED', url: '' }, id: { status: 'DISCONNECTED', url: '' } },
    status: { cloud: 'DISCONNECTED' },
    project: 'grüße',
  },
  allocationsReconnectCloud: {
    id: '{user}',
    user: '{user}',
    urls: { base: { status: 'DISCONNECTED', url: '' }, id: { status: 'DISCONNECTED', url: '' } },
    status: { cloud: 'DISCONNECTED' },
    project: '',
  },
  // Last: an import replaces the store (here with an empty one: the export of a store with nothing in it).
  databaseImport: {
    version: '1',
    ...Object.fromEntries(
      [
        'analyses',
        'applications',
        'assets',
        'codeAnalyses',
        'files',
        'formatMetrics',
        'formats',
        'fragments',
        'imageAnalyses',
        'models',
        'ocrAnalyses',
        'persons',
        'sensitives',
        'tags',
        'websites',
      ].map((field) => [field, []]),
    ),
    values: { iterable: [] },
  },
};
/** The operations the route table has rows of by hand (the associations among them are listed in BODILESS one by one). */
const ROUTED_BY_HAND = new Set(OPERATIONS.filter((o) => !LINK_OPERATIONS.some((link) => link.handler === o.handler)).map((o) => o.name));
/** Operations that take no body. */
export const BODILESS = [
  'applicationsSessionOpen',
  'conversationsCreateFromAsset',
  'conversationsDeleteSpecificConversation',
  'conversationSpecificConversationRename',
  'conversationAssociateAsset',
  'conversationDisassociateAsset',
  'messagesDeleteSpecificMessage',
  'assetsDeleteAsset',
  'assetAssociateTag',
  'assetDisassociateTag',
  'assetAssociateWebsite',
  'assetDisassociateWebsite',
  'annotationsDeleteSpecificAnnotation',
  'anchorsDeleteSpecificAnchor',
  'anchorAssociateConversation',
  'anchorDisassociateConversation',
  'conversationAssociateAnchor',
  'conversationDisassociateAnchor',
  'anchorAssociateAsset',
  'anchorDisassociateAsset',
  'assetAssociateAnchor',
  'assetDisassociateAnchor',
  'modelSpecificModelDownload',
  'modelSpecificModelDownloadCancel',
  'signIntoOS',
  'signOutOfOS',
  'tagsDeleteSpecificTag',
  'websitesDeleteSpecificWebsite',
  'workstreamPatternEngineProcessorsVisionCalibrationCapture',
  'workstreamPatternEngineProcessorsVisionEventDeleteSpecificVisionEvent',
  'workstreamSummaryRegenerateSpecificSummary',
  // Models and their runtimes.
  'unloadModels',
  'modelsDeleteSpecificModel',
  'modelSpecificModelLoad',
  'modelSpecificModelUnload',
  'ollamaInstall',
  'ollamaInstallCancel',
  'ollamaUpdateCancel',
  'foundryInstall',
  'foundryInstallCancel',
  'foundryUpdateCancel',
  'clearUser',
  'clearPKCE',
  'usersDisconnectUser',
  'activitiesDeleteSpecificActivity',
  'anchorRename',
  'conversationSpecificConversationPrepare',
  'conversationsCreateFromWorkstreamSummary',
  // A backup's cancels and restores take no body (or an optional Backup); a revoke none.
  'backupSpecificCreationCancel',
  'backupRestoreSpecificBackup',
  'backupRestoreSpecificBackupStreamed',
  'backupSpecificRestorationCancel',
  'linkifyShareRevoke',
  'backupsDeleteSpecificBackup',
  'sharesDeleteShare',
  'distributionsDeleteSpecificDistribution',
  // The person's delete and associations (from the graph table).
  KINDS.find((row) => row.kind === 'person')!.ops.delete!.name,
  ...GENERIC_RELATIONS.filter((r) => r.from === 'person').flatMap((r) => [r.associate.name, r.disassociate.name]),
  // The associations with a hand-written kind (src/core/handlers/links.ts), but those the route table has by hand (listed above).
  ...LINK_OPERATIONS.map((o) => o.name).filter((name) => !ROUTED_BY_HAND.has(name)),
];

/** The generic path's POST operations of the other kinds: the person's stand in for them (one body reader for all). */
export const GENERIC_STAND_INS = new Set(
  MATERIAL_OPERATIONS.filter(
    // (Not those a row of the route table answers in the generic path's place: a backup's create, a share's.)
    (o) =>
      o.method === 'POST' && !o.path.startsWith('/person') && OPERATIONS.some((row) => row.name === o.name && row.handler === o.handler),
  ).map((o) => o.name),
);

/** {model} in a path: a local model of the catalogue (its id is fixed), Phi-2 CPU. */
export const MODEL = 'a3d8039b-1692-59f8-b0e0-aeb39837af34';
