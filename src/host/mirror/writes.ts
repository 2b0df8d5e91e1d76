/**
 * The mirror's write table: how each write operation of the route table is queued for a
 * mirrored Pieces OS and replayed there, one declaration per operation (`WRITES`: the compiler
 * rejects a write of src/core/routes.ts without one, and a declaration of no write). An
 * operation is replayed as itself (its method, its path with its parameters, its query,
 * JSON body and `application` header), with every id it names that was created locally
 * rewritten to the id the upstream gave (every string of the body that is such an id); the
 * declaration says which records it is on (the body fields that name them), which records
 * it creates (and where the upstream's answer gives their ids), which record it is about
 * (for setting aside what a refusal makes impossible, and for dropping work a later delete
 * makes useless), and how a create whose answer was lost is found on the upstream.
 *
 * Path parameters always name records (`{conversation}`, `{message}`, `{asset}`,
 * `{application}`, `{session}`, `{format}`, `{annotation}`, `{tag}`, `{website}`, `{anchor}`),
 * and so do the `application` and `X-Application-ID` headers: they need no declaration.
 *
 * A write that is the upstream's business rather than a record the user made (a model's
 * download, signing in, launching an applet, a cloud allocation, a question to the copilot) is
 * declared `local`: it passes through while the upstream answers, and while it is away it is
 * answered here and not queued.
 */
import type { WriteOperationName } from '../../core/routes.js';
import { HOST_CANNOT, type HostCannotWriteName } from '../../core/handlers/host-cannot.js';
import { LINK_RELATIONS } from '../../core/handlers/links.js';
import { GENERIC_KINDS, GENERIC_RELATIONS } from '../../core/handlers/materials.js';
import { madeFromSeed } from '../../core/models/material.js';
import type { CreatedId, GenericKind, RecordKind } from '../../storage/schema.js';

/**
 * Where a request names a record: `param:<name>` (a path parameter), `body:<path>` (a field of
 * the JSON body by dotted path, `[]` stepping into each item of a list, `body:` the whole body),
 * `header:application`.
 */
export type IdPlace = `param:${string}` | `body:${string}` | 'header:application';

/** A queued operation's arguments, as the mirror replays them. */
export interface QueuedCall {
  params: Record<string, string>;
  body?: unknown;
}

/** When a record was created, from its wire form (`created.value`), in ms; undefined when it does not say. */
export function createdTime(record: unknown): number | undefined {
  const created = isRecord(record) && isRecord(record.created) ? record.created.value : undefined;
  const time = typeof created === 'string' ? Date.parse(created) : NaN;
  return Number.isNaN(time) ? undefined : time;
}

export interface MirrorSpec {
  /**
   * Not queued: while the upstream answers it passes through (and nothing is kept here); while
   * it is away it is answered here, and what it changed here stays here.
   */
  local?: true;
  /** The record the operation is about: where its id is (`created`: the first record it creates), and its kind. */
  about?: { kind: RecordKind; at: IdPlace | 'created' };
  /**
   * For a create: where its request names the record it makes its record inside, deleted with
   * it (a message in its conversation, an annotation on its asset): a create inside a record
   * deleted while away is not sent.
   */
  within?: IdPlace;
  /** Body fields that name the records it is on, with their kinds (path parameters and the application header need none). */
  names?: Partial<Record<`body:${string}`, RecordKind>>;
  /** The records it creates, read from an answer to it, in the order its local write lists them. */
  creates?: (answer: unknown) => CreatedId[];
  /** Sending it twice makes the same record (an upsert by a key the request carries): a lost answer is simply sent again. */
  idempotent?: true;
  /** It deletes the record it is about: the upstream answering 404 means it is gone already. */
  deletes?: true;
  /**
   * The SDK model its answer is, when it is a record the local copy keeps (while the upstream
   * answers, a write it took is kept from its answer). Without one, the record it is about is
   * read again from the upstream (or, for what no stream follows, the write is made here too).
   */
  answers?:
    | 'Conversation'
    | 'ConversationsCreateFromAssetOutput'
    | 'ConversationMessage'
    | 'Application'
    | 'Context'
    | 'Session'
    | 'Asset'
    | 'Format'
    | 'Annotation'
    | 'Anchor'
    /** A material of the generic path (the kind's model in the graph table), kept under the upstream's id. */
    | { material: GenericKind };
  /**
   * Materials of the generic path its answer does not show, read again from the upstream (their
   * item operations in the graph table) once it took the write, and kept: both sides of an
   * association, the record a score increment is on.
   */
  reads?: ReadonlyArray<{ kind: GenericKind; at: IdPlace }>;
  /**
   * How a create whose answer was lost (sent, then the upstream or the worker went away) is
   * looked for on the upstream before it is sent again: the path of a list to read, its items,
   * and whether an item (one the mirror did not know) is the record the call created.
   */
  find?: {
    list(call: QueuedCall): string;
    items(answer: unknown): unknown[];
    matches(call: QueuedCall, candidate: unknown): boolean;
  };
}

type Json = unknown;
const isRecord = (value: unknown): value is Record<string, Json> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Visits every string a body path (`a.b[].c`, or '' for the body itself) reaches in `body`;
 * `visit` returns the value to put in its place. Returns the body with the replacements (the
 * given body is not changed).
 */
export function mapBodyPath(body: Json, path: string, visit: (id: string) => string): Json {
  const steps = path === '' ? [] : path.split('.');
  const walk = (value: Json, at: number): Json => {
    if (at === steps.length) return typeof value === 'string' ? visit(value) : value;
    const step = steps[at]!;
    const list = step.endsWith('[]');
    const key = list ? step.slice(0, -2) : step;
    if (!isRecord(value) || !(key in value)) return value;
    const inner = value[key];
    const next = list ? (Array.isArray(inner) ? inner.map((item) => walk(item, at + 1)) : inner) : walk(inner, at + 1);
    return next === inner ? value : { ...value, [key]: next };
  };
  return walk(body, 0);
}

/** The strings a body path reaches. */
export function readBodyPath(body: Json, path: string): string[] {
  const found: string[] = [];
  mapBodyPath(body, path, (id) => {
    found.push(id);
    return id;
  });
  return found;
}

/** A conversation's message ids in conversation order, from a wire Conversation (`messages.iterable` ordered by `indices`). */
export function conversationMessageIds(conversation: unknown): string[] {
  if (!isRecord(conversation) || !isRecord(conversation.messages)) return [];
  const { iterable, indices } = conversation.messages as { iterable?: Array<{ id?: unknown }>; indices?: Record<string, number> };
  const ids = (iterable ?? []).map((item) => item?.id).filter((id): id is string => typeof id === 'string');
  if (!isRecord(indices)) return ids;
  return ids.filter((id) => indices[id] !== -1).sort((a, b) => (indices[a] ?? 0) - (indices[b] ?? 0));
}

const idOf = (value: unknown): string | undefined => (isRecord(value) && typeof value.id === 'string' ? value.id : undefined);

/** The ids a created conversation's answer gives: the conversation, then its messages in order. */
export const createdConversation = (conversation: unknown): CreatedId[] => {
  const id = idOf(conversation);
  return id
    ? [
        { kind: 'conversation', id },
        ...conversationMessageIds(conversation).map((m): CreatedId => ({ kind: 'conversationMessage', id: m })),
      ]
    : [];
};

/** The first created id of the kind, from an answer's field (or the answer itself). */
export const createdAt =
  (kind: RecordKind, field?: string) =>
  (answer: unknown): CreatedId[] => {
    const id = idOf(field === undefined ? answer : isRecord(answer) ? answer[field] : undefined);
    return id ? [{ kind, id }] : [];
  };

/** The text of a message (or seeded message): its fragment's raw string. */
export const messageText = (message: unknown): string | undefined => {
  const fragment = isRecord(message) && isRecord(message.fragment) ? message.fragment : undefined;
  const string = fragment && isRecord(fragment.string) ? fragment.string : undefined;
  return typeof string?.raw === 'string' ? string.raw : undefined;
};

/** A conversation found on the upstream is the one a queued create made: same name (when given) and the same messages, in order. */
export function sameConversation(call: QueuedCall, candidate: unknown): boolean {
  const body = isRecord(call.body) ? call.body : {};
  if (!isRecord(candidate)) return false;
  if (typeof body.name === 'string' && candidate.name !== body.name) return false;
  const sent = (Array.isArray(body.messages) ? body.messages : []).map(messageText);
  const messages = isRecord(candidate.messages) && Array.isArray(candidate.messages.iterable) ? candidate.messages.iterable : [];
  const order = conversationMessageIds(candidate);
  const byId = new Map(messages.map((item: { id?: string; reference?: unknown }) => [item?.id, item?.reference]));
  const found = order.map((id) => messageText(byId.get(id)));
  return sent.length === found.length && sent.every((text, i) => text === found[i]);
}

/** A message found on the upstream is the one a queued create made: same role and text. */
export function sameMessage(call: QueuedCall, candidate: unknown): boolean {
  const body = isRecord(call.body) ? call.body : {};
  return isRecord(candidate) && candidate.role === body.role && messageText(candidate) === messageText(body);
}

/** The items of a list answer (`{iterable: […]}`). */
export const iterable = (answer: unknown): unknown[] => (isRecord(answer) && Array.isArray(answer.iterable) ? answer.iterable : []);

/**
 * The body fields of an Asset (as `assetUpdate` takes it) that name the records it is on besides
 * the asset: what hangs on it. (Every id the map knows is rewritten wherever the body holds it.)
 */
export const ASSET_NAMES: Partial<Record<`body:${string}`, RecordKind>> = {
  'body:formats.iterable[].id': 'format',
  'body:annotations.iterable[].id': 'annotation',
  'body:tags.iterable[].id': 'tag',
  'body:websites.iterable[].id': 'website',
};

/** ASSET_NAMES for an Asset sent under `key` of the body (a reclassification's `asset`). */
const ASSET_NAMES_IN = (key: string) =>
  Object.fromEntries(
    Object.entries(ASSET_NAMES).map(([place, kind]) => [place.replace('body:', `body:${key}.`), kind]),
  ) as MirrorSpec['names'];

/** The ids a created asset's answer (an Asset) gives: the asset, then its formats, annotations, tags and websites, each in order. */
export const createdAsset = (asset: unknown): CreatedId[] => {
  const id = idOf(asset);
  if (!id || !isRecord(asset)) return [];
  const listed = (key: string) =>
    isRecord(asset[key]) && Array.isArray((asset[key] as { iterable?: unknown }).iterable)
      ? (asset[key] as { iterable: unknown[] }).iterable
      : [];
  return [
    { kind: 'asset', id },
    ...listed('formats').flatMap((f): CreatedId[] => (idOf(f) ? [{ kind: 'format', id: idOf(f)! }] : [])),
    ...listed('annotations').flatMap((a): CreatedId[] => (idOf(a) ? [{ kind: 'annotation', id: idOf(a)! }] : [])),
    ...listed('tags').flatMap((t): CreatedId[] => (idOf(t) ? [{ kind: 'tag', id: idOf(t)! }] : [])),
    ...listed('websites').flatMap((w): CreatedId[] => (idOf(w) ? [{ kind: 'website', id: idOf(w)! }] : [])),
  ];
};

/** The text a seed (a Seed, or a bare SeededAsset) or a format carries: its fragment's (or file's) raw string. */
function seededText(value: unknown): string | undefined {
  const format = isRecord(value) && isRecord(value.format) ? value.format : value;
  for (const kind of ['fragment', 'file']) {
    const part = isRecord(format) && isRecord(format[kind]) ? format[kind] : undefined;
    const string = part && isRecord(part.string) ? part.string : undefined;
    if (typeof string?.raw === 'string') return string.raw;
  }
  return undefined;
}

/**
 * An asset found on the upstream is the one a queued create made: the seed's name (when given), and its text
 * as the asset's original or preview.
 */
export function sameAsset(call: QueuedCall, candidate: unknown): boolean {
  const body = isRecord(call.body) ? call.body : {};
  const seeded = isRecord(body.asset) ? body.asset : body;
  const metadata = isRecord(seeded.metadata) ? seeded.metadata : {};
  if (!isRecord(candidate)) return false;
  if (typeof metadata.name === 'string' && metadata.name.trim() && candidate.name !== metadata.name) return false;
  const text = seededText(seeded);
  if (text === undefined) return true;
  const references = [
    isRecord(candidate.original) ? candidate.original.reference : undefined,
    isRecord(candidate.preview) && isRecord(candidate.preview.base) ? candidate.preview.base.reference : undefined,
  ];
  const formats = isRecord(candidate.formats) && Array.isArray(candidate.formats.iterable) ? candidate.formats.iterable : [];
  return [...references, ...formats].some((format) => seededText(format) === text);
}

/** An annotation found on the upstream is the one a queued create made: same type, text and asset. */
export function sameAnnotation(call: QueuedCall, candidate: unknown): boolean {
  const body = isRecord(call.body) ? call.body : {};
  if (!isRecord(candidate) || candidate.type !== body.type || candidate.text !== body.text) return false;
  const asset = isRecord(candidate.asset) ? candidate.asset.id : candidate.asset;
  return (asset ?? undefined) === (typeof body.asset === 'string' ? body.asset : undefined);
}

/** An anchor found on the upstream is the one a queued create made: same type and path. */
export function sameAnchor(call: QueuedCall, candidate: unknown): boolean {
  const body = isRecord(call.body) ? call.body : {};
  if (!isRecord(candidate) || candidate.type !== body.type) return false;
  const points = isRecord(candidate.points) && Array.isArray(candidate.points.iterable) ? candidate.points.iterable : [];
  const paths = points.map((point: unknown) =>
    isRecord(point) ? (isRecord(point.reference) ? point.reference.fullpath : point.fullpath) : undefined,
  );
  return paths.includes(body.fullpath);
}

/** Where a create's answer was lost, the conversations are looked through for it. */
const FIND_CONVERSATION = { list: () => '/conversations?transferables=true', items: iterable, matches: sameConversation };

/** What a Seed (or a bare SeededAsset) names: its application, and what its annotations link to. */
const SEED_NAMES = Object.fromEntries(
  ['asset.', ''].flatMap((at) => [
    [`body:${at}application.id`, 'application'],
    [`body:${at}metadata.annotations[].conversation`, 'conversation'],
    [`body:${at}metadata.annotations[].anchor`, 'anchor'],
  ]),
) as MirrorSpec['names'];

/** The upstream's business, not a record the user made: passes through while it answers, answered here (not queued) while it is away. */
const LOCAL: MirrorSpec = { local: true };

/**
 * What no host of this service can do (a file picker, opening a URL in the OS, ending Pieces OS:
 * src/core/handlers/host-cannot.ts): the upstream does it while it answers; while it is away it
 * is refused here (501), not queued.
 */
const HOST_CANNOT_POSTS = HOST_CANNOT.filter((row) => row.method === 'POST');
const HOST_CANNOT_WRITES = Object.fromEntries(HOST_CANNOT_POSTS.map((row) => [row.name, LOCAL])) as Record<HostCannotWriteName, MirrorSpec>;

/** A change of an asset answered without it (an association): the asset is read again from the upstream. */
const ASSET_EDIT: MirrorSpec = { about: { kind: 'asset', at: 'param:asset' } };
/**
 * An anchor associated with a conversation or an asset (or no longer), from either side: about
 * the anchor (its delete makes it useless); both ids are path parameters, rewritten on replay.
 * While the upstream answers, the association is made here as well (its answer is empty).
 */
const ANCHOR_LINK: MirrorSpec = { about: { kind: 'anchor', at: 'param:anchor' } };

/** Every write of the route table, and how it is queued and replayed (see the top of this file). */
export const WRITES = {
  connect: {
    about: { kind: 'application', at: 'created' },
    creates: createdAt('application', 'application'),
    idempotent: true,
    answers: 'Context',
  },
  applicationUpdate: { about: { kind: 'application', at: 'body:id' }, answers: 'Application' },
  applicationsRegister: {
    about: { kind: 'application', at: 'created' },
    creates: createdAt('application'),
    idempotent: true,
    answers: 'Application',
  },
  applicationsSessionOpen: { about: { kind: 'session', at: 'created' }, creates: createdAt('session'), answers: 'Session' },
  applicationsSessionClose: { about: { kind: 'session', at: 'body:' }, answers: 'Session' },
  applicationsUsageEngagementInteraction: { about: { kind: 'application', at: 'header:application' } },
  applicationsUsageEngagementKeyboard: { about: { kind: 'application', at: 'header:application' } },
  applicationsUsageInstallation: { about: { kind: 'application', at: 'body:application.id' } },
  postApplicationsUsageUpdated: { about: { kind: 'application', at: 'body:current.id' }, names: { 'body:previous.id': 'application' } },
  conversationsCreateSpecificConversation: {
    about: { kind: 'conversation', at: 'created' },
    creates: createdConversation,
    find: FIND_CONVERSATION,
    answers: 'Conversation',
  },
  conversationUpdate: {
    about: { kind: 'conversation', at: 'body:id' },
    names: { 'body:messages.iterable[].id': 'conversationMessage', 'body:assets.iterable[].id': 'asset' },
    answers: 'Conversation',
  },
  messagesCreateSpecificMessage: {
    about: { kind: 'conversationMessage', at: 'created' },
    within: 'body:conversation.id',
    names: { 'body:conversation.id': 'conversation' },
    creates: createdAt('conversationMessage'),
    answers: 'ConversationMessage',
    find: {
      list: ({ body }) => `/conversation/${(body as { conversation: { id: string } }).conversation.id}/messages`,
      items: iterable,
      matches: sameMessage,
    },
  },
  messageSpecificMessageUpdate: {
    about: { kind: 'conversationMessage', at: 'body:id' },
    names: { 'body:conversation.id': 'conversation' },
    answers: 'ConversationMessage',
  },
  messageUpdateValue: {
    about: { kind: 'conversationMessage', at: 'body:id' },
    names: { 'body:conversation.id': 'conversation' },
    answers: 'ConversationMessage',
  },
  assetsCreateNewAsset: {
    about: { kind: 'asset', at: 'created' },
    names: SEED_NAMES,
    creates: createdAsset,
    answers: 'Asset',
    find: { list: () => '/assets?transferables=true', items: iterable, matches: sameAsset },
  },
  assetUpdate: { about: { kind: 'asset', at: 'body:id' }, names: ASSET_NAMES, answers: 'Asset' },
  formatUpdateValue: {
    about: { kind: 'format', at: 'body:id' },
    names: { 'body:asset': 'asset', 'body:asset.id': 'asset', 'body:creator': 'application', 'body:application.id': 'application' },
    answers: 'Format',
  },
  annotationsCreateNewAnnotation: {
    about: { kind: 'annotation', at: 'created' },
    within: 'body:asset',
    names: { 'body:asset': 'asset', 'body:conversation': 'conversation', 'body:anchor': 'anchor' },
    creates: createdAt('annotation'),
    answers: 'Annotation',
    find: { list: () => '/annotations', items: iterable, matches: sameAnnotation },
  },
  annotationUpdate: { about: { kind: 'annotation', at: 'body:id' }, names: { 'body:asset.id': 'asset' }, answers: 'Annotation' },
  // A question to the copilot: the upstream's model answers while it is up, the local one while it is away (its exchange stays here).
  question: LOCAL,
  anchorsCreateNewAnchor: {
    about: { kind: 'anchor', at: 'created' },
    names: { 'body:conversation': 'conversation', 'body:asset': 'asset' },
    creates: createdAt('anchor'),
    answers: 'Anchor',
    find: { list: () => '/anchors', items: iterable, matches: sameAnchor },
  },
  signIntoOS: LOCAL,
  signOutOfOS: LOCAL,
  osAppletLaunch: LOCAL,
  // The OS's own settings and permissions: the upstream's business, not a record the user made.
  osSettingsUpdate: LOCAL,
  osPermissionsRequest: LOCAL,
  // The local identity: signing in, the profile, tokens and the cloud allocation are the upstream's business.
  updateUser: LOCAL,
  userUpdateVanity: LOCAL,
  selectUser: LOCAL,
  clearUser: LOCAL,
  userBetaStatus: LOCAL,
  authenticateFromOauthToken: LOCAL,
  usersDisconnectUser: LOCAL,
  generateCode: LOCAL,
  respondWithCode: LOCAL,
  generateToken: LOCAL,
  clearPKCE: LOCAL,
  exchangeForAuth0Token: LOCAL,
  allocationsConnectNewCloud: LOCAL,
  allocationsDisconnectCloud: LOCAL,
  allocationsReconnectCloud: LOCAL,
  allocationUpdate: LOCAL,
  conversationsCreateFromAsset: {
    about: { kind: 'conversation', at: 'created' },
    creates: (answer) => createdConversation((answer as { conversation?: { reference?: unknown } })?.conversation?.reference),
    answers: 'ConversationsCreateFromAssetOutput',
    find: {
      ...FIND_CONVERSATION,
      matches: ({ params }, candidate) => JSON.stringify((candidate as { assets?: unknown })?.assets ?? '').includes(`"${params.asset}"`),
    },
  },
  conversationsDeleteSpecificConversation: { about: { kind: 'conversation', at: 'param:conversation' }, deletes: true },
  conversationSpecificConversationRename: { about: { kind: 'conversation', at: 'param:conversation' }, answers: 'Conversation' },
  conversationAssociateAsset: { about: { kind: 'conversation', at: 'param:conversation' } },
  conversationDisassociateAsset: { about: { kind: 'conversation', at: 'param:conversation' } },
  messagesDeleteSpecificMessage: { about: { kind: 'conversationMessage', at: 'param:message' }, deletes: true },
  assetsDeleteAsset: { about: { kind: 'asset', at: 'param:asset' }, deletes: true },
  assetAssociateTag: ASSET_EDIT,
  assetDisassociateTag: ASSET_EDIT,
  assetAssociateWebsite: ASSET_EDIT,
  assetDisassociateWebsite: ASSET_EDIT,
  annotationsDeleteSpecificAnnotation: { about: { kind: 'annotation', at: 'param:annotation' }, deletes: true },
  modelSpecificModelDownload: LOCAL,
  modelSpecificModelDownloadCancel: LOCAL,
  modelsDeleteSpecificModelCache: LOCAL,
  anchorAssociateConversation: ANCHOR_LINK,
  anchorDisassociateConversation: ANCHOR_LINK,
  anchorAssociateAsset: ANCHOR_LINK,
  anchorDisassociateAsset: ANCHOR_LINK,
  conversationAssociateAnchor: ANCHOR_LINK,
  conversationDisassociateAnchor: ANCHOR_LINK,
  assetAssociateAnchor: ANCHOR_LINK,
  assetDisassociateAnchor: ANCHOR_LINK,
  anchorsDeleteSpecificAnchor: { about: { kind: 'anchor', at: 'param:anchor' }, deletes: true },
  // Tags and websites on their own: made (on the asset its body names), updated, scored and deleted as here.
  tagsCreateNewTag: { about: { kind: 'tag', at: 'created' }, names: { 'body:asset': 'asset' }, creates: createdAt('tag') },
  tagUpdate: { about: { kind: 'tag', at: 'body:id' } },
  tagScoresIncrement: { about: { kind: 'tag', at: 'param:tag' } },
  tagsDeleteSpecificTag: { about: { kind: 'tag', at: 'param:tag' }, deletes: true },
  websitesCreateNewWebsite: { about: { kind: 'website', at: 'created' }, names: { 'body:asset': 'asset' }, creates: createdAt('website') },
  websiteUpdate: { about: { kind: 'website', at: 'body:id' } },
  websiteScoresIncrement: { about: { kind: 'website', at: 'param:website' } },
  websitesDeleteSpecificWebsite: { about: { kind: 'website', at: 'param:website' }, deletes: true },
  // The workstream pattern engine: an ingestion makes records the upstream names (its answer names none: the
  // follower reads its event); an autogenerated summary and its regeneration are kept from their answers; the
  // vision processor's switches, its events and calibrations are the upstream's own business.
  workstreamPatternEngineCreateIngestion: { names: { 'body:event.summary.id': 'workstreamSummary' } },
  workstreamSummariesCreateAutogeneratedWorkstreamSummary: {
    about: { kind: 'workstreamSummary', at: 'created' },
    names: { 'body:events.iterable[].id': 'workstreamEvent' },
    creates: createdAt('workstreamSummary'),
    answers: { material: 'workstreamSummary' },
  },
  workstreamSummaryRegenerateSpecificSummary: {
    about: { kind: 'workstreamSummary', at: 'param:workstream_summary' },
    answers: { material: 'workstreamSummary' },
  },
  workstreamPatternEngineProcessorsVisionActivate: LOCAL,
  workstreamPatternEngineProcessorsVisionDeactivate: LOCAL,
  workstreamPatternEngineProcessorsVisionCalibrationCapture: LOCAL,
  workstreamPatternEngineProcessorsVisionDataClear: LOCAL,
  workstreamPatternEngineProcessorsVisionEventsScopedDelete: LOCAL,
  workstreamPatternEngineProcessorsVisionEventDeleteSpecificVisionEvent: LOCAL,
  // Models and their runtimes: the upstream's own business (its models, its Ollama, its keys).
  modelsCreateNewModel: LOCAL,
  unloadModels: LOCAL,
  modelsDeleteSpecificModel: LOCAL,
  modelUpdate: LOCAL,
  modelSpecificModelLoad: LOCAL,
  modelSpecificModelUnload: LOCAL,
  modelScoresIncrement: LOCAL,
  ollamaInstall: LOCAL,
  ollamaInstallCancel: LOCAL,
  ollamaUpdate: LOCAL,
  ollamaUpdateCancel: LOCAL,
  ollamaUninstall: LOCAL,
  foundryInstall: LOCAL,
  foundryInstallCancel: LOCAL,
  foundryUpdate: LOCAL,
  foundryUpdateCancel: LOCAL,
  foundryUninstall: LOCAL,
  externalProviderApiKeyCreate: LOCAL,
  externalProviderApiKeyUpdate: LOCAL,
  externalProviderApiKeyDelete: LOCAL,
  // The rest of the hand-written kinds' writes: a score increment is about its record (read again
  // from the upstream once it took it); a reclassification about the asset or format it changes.
  assetScoresIncrement: { about: { kind: 'asset', at: 'param:asset' } },
  conversationScoresIncrement: { about: { kind: 'conversation', at: 'param:conversation' } },
  messageScoresIncrement: { about: { kind: 'conversationMessage', at: 'param:message' } },
  anchorScoresIncrement: { about: { kind: 'anchor', at: 'param:anchor' } },
  annotationScoresIncrement: { about: { kind: 'annotation', at: 'param:annotation' } },
  assetReclassify: { about: { kind: 'asset', at: 'body:asset.id' }, names: ASSET_NAMES_IN('asset'), answers: 'Asset' },
  activitiesCreateNewActivity: {
    about: { kind: 'activity', at: 'created' },
    names: { 'body:asset.id': 'asset', 'body:application.id': 'application' },
    creates: createdAt('activity'),
  },
  activityUpdate: { about: { kind: 'activity', at: 'body:id' }, names: { 'body:asset.id': 'asset' } },
  activitiesDeleteSpecificActivity: { about: { kind: 'activity', at: 'param:activity' }, deletes: true },
  anchorUpdate: { about: { kind: 'anchor', at: 'body:id' }, answers: 'Anchor' },
  anchorRename: { about: { kind: 'anchor', at: 'param:anchor' }, answers: 'Anchor' },
  // Every application's processing mode: the OS's own business (as its settings), not a record the user made.
  applicationsBulkUpdateApplicationCapabilities: LOCAL,
  conversationSummarize: {
    about: { kind: 'conversation', at: 'param:conversation' },
    names: { 'body:messages.iterable[].id': 'conversationMessage' },
    creates: createdAt('annotation', 'annotation'),
  },
  conversationsCreateFromWorkstreamSummary: {
    about: { kind: 'conversation', at: 'created' },
    creates: (answer) => createdConversation((answer as { conversation?: { reference?: unknown } })?.conversation?.reference),
    reads: [{ kind: 'workstreamSummary', at: 'param:workstream_summary' }],
    find: {
      ...FIND_CONVERSATION,
      matches: ({ params }, candidate) =>
        JSON.stringify((candidate as { summaries?: unknown })?.summaries ?? '').includes(`"${params.workstream_summary}"`),
    },
  },
  formatReclassify: {
    about: { kind: 'format', at: 'body:format.id' },
    names: { 'body:format.asset.id': 'asset', 'body:format.application.id': 'application' },
    answers: 'Format',
  },
  // Discovery stores what it finds with the upstream's own analysis while it answers; while it is away, here (its answer names no record to map).
  discoveryDiscoverAssets: LOCAL,
  discoveryDiscoverAssetsHtml: LOCAL,
  discoveryDiscoverSensitives: LOCAL,
  discoveryDiscoverTagsRelated: LOCAL,
  // The connector's extras: an intention and a reaction are the upstream's suggestion business (a reaction's saved asset is not named by its text answer);
  // onboarding and tracking are the application's, queued.
  intention: LOCAL,
  react: LOCAL,
  onboarded: { about: { kind: 'application', at: 'param:application' } },
  track: { about: { kind: 'application', at: 'param:application' } },
  assetsCreateNewAssetFromMacos: { about: { kind: 'asset', at: 'created' }, creates: createdAsset, answers: 'Asset' },
  assetsCreateUltraSuiteAsset: { about: { kind: 'asset', at: 'created' }, creates: createdAsset, answers: 'Asset' },
  // A notification is shown by the upstream while it answers, by this host while it is away.
  sendLocalNotification: LOCAL,
  // Backups, restores and imports are of the whole store (the upstream's own, while it answers), and replace it: not queued.
  // A share's link and its distributions are the upstream's (its cloud's) to make: a local one would mean nothing there.
  backupsCreateNewBackup: LOCAL,
  backupsCreateNewBackupStreamed: LOCAL,
  backupsDeleteSpecificBackup: LOCAL,
  backup: LOCAL,
  backupAsset: LOCAL,
  backupSpecificCreationCancel: LOCAL,
  backupRestoreSpecificBackup: LOCAL,
  backupRestoreSpecificBackupStreamed: LOCAL,
  backupSpecificRestorationCancel: LOCAL,
  databaseImport: LOCAL,
  sharesCreateNewShare: LOCAL,
  sharesDeleteShare: LOCAL,
  linkify: LOCAL,
  linkifyMultiple: LOCAL,
  linkifyShareRevoke: LOCAL,
  distributionsCreateNewDistribution: LOCAL,
  distributionsDeleteSpecificDistribution: LOCAL,
  distributionUpdate: LOCAL,
  ...HOST_CANNOT_WRITES,
} satisfies Record<WriteOperationName, MirrorSpec>;

/**
 * The writes of the generic path, from the graph table as its routes are: a create is about the
 * record it creates (its answer's id); an update about its body's `id`; a delete and a score
 * increment about their path parameter; an association (or its undoing) about the record whose
 * path it hangs on (both ids are path parameters, rewritten on replay). While the upstream
 * answers, a create's and an update's answer (the kind's model) is kept; what a score increment
 * or an association changed is read again from the upstream (`reads`).
 */
const GENERIC_WRITES: ReadonlyMap<string, MirrorSpec> = new Map([
  ...GENERIC_KINDS.flatMap((row) => {
    const kind = row.kind as GenericKind;
    const param = (path: string): IdPlace => `param:${/\{(\w+)\}/.exec(path)![1]!}`;
    const { create, update, delete: remove, scores, snapshot } = row.ops;
    const answers = { material: kind };
    // A create whose answer was lost is looked for among the kind's records.
    const find = snapshot && {
      list: () => snapshot.path,
      items: iterable,
      matches: (call: QueuedCall, candidate: unknown) => madeFromSeed(row, call.body, candidate),
    };
    const created = { about: { kind, at: 'created' }, creates: createdAt(kind), answers, ...(find ? { find } : {}) } as const;
    // A kind the upstream makes (its create declared local in WRITES: a share, a backup): every write of it is its business too.
    if (create && (WRITES as Record<string, MirrorSpec>)[create.name]?.local)
      return [create, update, remove, scores].flatMap((op) => (op ? [[op.name, LOCAL] as const] : []));
    return [
      ...(create ? [[create.name, created] as const] : []),
      ...(update ? [[update.name, { about: { kind, at: 'body:id' }, answers }] as const] : []),
      ...(remove ? [[remove.name, { about: { kind, at: param(remove.path) }, deletes: true }] as const] : []),
      ...(scores ? [[scores.name, { about: { kind, at: param(scores.path) }, reads: [{ kind, at: param(scores.path) }] }] as const] : []),
    ] satisfies Array<readonly [string, MirrorSpec]>;
  }),
  ...GENERIC_RELATIONS.flatMap((relation) => {
    const [from, to] = [relation.from as GenericKind, relation.to as GenericKind];
    const spec: MirrorSpec = {
      about: { kind: from, at: `param:${relation.params[0]}` },
      reads: [
        { kind: from, at: `param:${relation.params[0]}` },
        { kind: to, at: `param:${relation.params[1]}` },
      ],
    };
    return [
      [relation.associate.name, spec],
      [relation.disassociate.name, spec],
    ] as const;
  }),
]);

/**
 * The associations with a hand-written kind (handlers/links.ts), from the graph table: about the
 * record whose path it hangs on (both ids are path parameters, rewritten on replay). While the
 * upstream answers, the association is made here as well (its answer is empty). The rows the table
 * has by hand (WRITES) keep their own declarations.
 */
export const LINK_WRITES: ReadonlyMap<string, MirrorSpec> = new Map(
  LINK_RELATIONS.flatMap((relation) => {
    const spec: MirrorSpec = { about: { kind: relation.from as RecordKind, at: `param:${relation.params[0]}` } };
    return [
      [relation.associate.name, spec],
      [relation.disassociate.name, spec],
    ] as const;
  }).filter(([name]) => !Object.hasOwn(WRITES, name)),
);

/** The generic path's declarations, but of the operations a row of the route table answers in its place (declared in WRITES). */
export const MATERIAL_WRITES: ReadonlyMap<string, MirrorSpec> = new Map(
  [...GENERIC_WRITES].filter(([name]) => !Object.hasOwn(WRITES, name)),
);

const DECLARED: ReadonlyMap<string, MirrorSpec> = new Map([...Object.entries(WRITES), ...MATERIAL_WRITES, ...LINK_WRITES]);

/** The declaration of a write operation; undefined for an operation that writes nothing (a read, a search). */
export const mirrorOf = (operation: string): MirrorSpec | undefined => DECLARED.get(operation);

/** Whether an operation is queued while the upstream is away: a write that is not the upstream's business. */
export const queuedWhileAway = (operation: string): boolean => {
  const spec = DECLARED.get(operation);
  return !!spec && !spec.local;
};
