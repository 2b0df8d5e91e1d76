/**
 * The SDK operations that need the operating system itself, which no host of this service (a
 * service worker, a page, Node, the loopback server) can truly do: a native file or folder
 * picker, opening a path or a URL in the OS, reading or looking at the machine's files by path,
 * ending or restarting the Pieces OS process or its applets, updating Pieces OS or preparing its
 * own models, what needs a Pieces cloud account (a linked provider, GitHub gists). Each is answered 501 naming the
 * operation and why, and changes nothing; through a mirror, the real Pieces OS does it while it
 * answers (src/host/mirror/writes.ts). What can be emulated over the store is not here.
 */
import type { OperationHandler } from '../context.js';
import { HttpError, reply } from '../http.js';

export interface HostCannot {
  name: string;
  api: string;
  method: 'GET' | 'POST';
  path: string;
  /** What the operation does, and why no host here can: the end of its 501's sentence. */
  reason: string;
}

/** Reading the machine's files by path: a browser has no such access, and a server of this service will not give it. */
const NO_FILES =
  'a browser host cannot reach the file system by path, and the Node hosts do not, since any caller of their port could read the machine’s files';

export const HOST_CANNOT = [
  {
    name: 'osFilesystemPickFiles',
    api: 'OSApi',
    method: 'POST',
    path: '/os/filesystem/files/pick',
    reason:
      'it shows the operating system’s file picker and answers the absolute paths chosen; no host of this service has one (a browser’s file input gives a file’s contents, never its path)',
  },
  {
    name: 'osFilesystemPickFolders',
    api: 'OSApi',
    method: 'POST',
    path: '/os/filesystem/folders/pick',
    reason:
      'it shows the operating system’s folder picker and answers the absolute paths chosen; no host of this service has one (a browser’s folder picker gives a handle, never a path)',
  },
  {
    name: 'osFilesystemFileOpen',
    api: 'OSApi',
    method: 'POST',
    path: '/os/filesystem/file/open',
    reason:
      'it opens a path in the operating system’s file manager (Finder, Explorer); no host of this service can open a window of the operating system',
  },
  {
    name: 'osBrowserUrlOpen',
    api: 'OSApi',
    method: 'POST',
    path: '/os/browser/url/open',
    reason:
      'it opens a URL in the operating system’s default browser; a service worker or a server cannot open a window, and a page only a tab of its own browser, on a click of the user',
  },
  {
    name: 'osFilesystemFileReadStreamed',
    api: 'OSApi',
    method: 'GET',
    path: '/os/filesystem/file/read/streamed',
    reason: `it reads a file of the machine by its absolute path; ${NO_FILES}`,
  },
  {
    name: 'osFilesystemPathVerify',
    api: 'OSApi',
    method: 'POST',
    path: '/os/filesystem/path/verify',
    reason: `it tells whether an absolute path of the machine is a file, a folder or nothing; ${NO_FILES}`,
  },
  {
    name: 'osTerminate',
    api: 'OSApi',
    method: 'POST',
    path: '/os/terminate',
    reason:
      'it force-quits the Pieces OS process; this service runs inside its host (a browser, a Node program), whose process a request cannot end',
  },
  {
    name: 'osRestart',
    api: 'OSApi',
    method: 'GET',
    path: '/os/restart',
    reason:
      'it restarts the Pieces OS process; this service runs inside its host (a browser, a Node program), whose process a request cannot end and start again',
  },
  {
    name: 'osAppletTerminate',
    api: 'OSApi',
    method: 'POST',
    path: '/os/applet/terminate',
    reason:
      'it stops a micro-application Pieces OS runs in its own process; none runs here (osAppletLaunch answers this service’s own port), and this service cannot stop itself',
  },
  {
    name: 'osAppletRestart',
    api: 'OSApi',
    method: 'POST',
    path: '/os/applet/restart',
    reason:
      'it stops a micro-application Pieces OS runs in its own process and starts it again; none runs here (osAppletLaunch answers this service’s own port), and this service cannot restart itself',
  },
  {
    name: 'osMemoryOptimize',
    api: 'OSApi',
    method: 'POST',
    path: '/os/memory/optimize',
    reason:
      'it has Pieces OS release memory it holds; the memory of this service is its host’s (the browser’s or Node’s) to collect, which no request can make it do',
  },
  {
    name: 'allocationsCreateNewAllocation',
    api: 'AllocationsApi',
    method: 'POST',
    path: '/allocations/create',
    reason:
      'it creates a cloud allocation, which only Pieces’ cloud does (Pieces OS itself answers it only within the cloud), and no host of this service has a cloud to make one in (a user’s allocation is kept as a record: allocationsConnectNewCloud)',
  },
  {
    name: 'allocationsDeleteAllocation',
    api: 'AllocationsApi',
    method: 'POST',
    path: '/allocations/delete',
    reason:
      'it deletes a cloud allocation, which only Pieces’ cloud does (Pieces OS itself answers it only within the cloud), and no host of this service has a cloud to delete one from (allocationsDisconnectCloud drops the record kept)',
  },
  {
    name: 'osNanoModelsPrepare',
    api: 'OSApi',
    method: 'POST',
    path: '/os/nano_models/prepare',
    reason:
      'it downloads and loads the small task-specific models Pieces OS runs for its own machine learning; this service runs none (its classification, segmentation and relevance are deterministic and need no model)',
  },
  {
    name: 'osUpdateCheck',
    api: 'OSApi',
    method: 'POST',
    path: '/os/update/check',
    reason:
      'it asks Pieces’ update server whether a newer Pieces OS is available and downloads it; this service is not installed as Pieces OS is, but comes with the application that serves it (its npm package), which no request can update',
  },
  {
    name: 'osUpdateCheckStream',
    api: 'OSApi',
    method: 'GET',
    path: '/os/update/check/stream',
    reason:
      'it streams the progress of Pieces OS downloading an update of itself; this service comes with the application that serves it (its npm package), which no request can update',
  },
  {
    name: 'linkProvider',
    api: 'OSApi',
    method: 'POST',
    path: '/os/link_provider',
    reason:
      'it links a sign-in provider (GitHub, Google…) to the signed-in user’s Pieces account through Pieces’ authentication service; the user here is a local profile with no Pieces account to link to',
  },
  {
    name: 'getInstallationPath',
    api: 'WellKnownApi',
    method: 'GET',
    path: '/.well-known/installation/path',
    reason:
      'it answers the folder of the machine Pieces OS is installed in; a browser host is served from an origin and has no such folder, and the Node hosts do not give the machine’s paths to any caller of their port',
  },
  {
    name: 'importGithubGists',
    api: 'GithubApi',
    method: 'POST',
    path: '/github/gists/import',
    reason:
      'it reads the signed-in user’s gists from GitHub through the GitHub account linked to their Pieces account (the request names no GitHub user); the user here is a local profile with no linked GitHub account',
  },
] as const satisfies readonly HostCannot[];

/** The name of an operation no host of this service can do. */
export type HostCannotName = (typeof HOST_CANNOT)[number]['name'];

/** Those of them that are POSTs (writes: a mirrored Pieces OS needs a declaration of each). */
export type HostCannotWriteName = Extract<(typeof HOST_CANNOT)[number], { method: 'POST' }>['name'];

/** The 501 of `row`: the request is not read, and nothing is changed. */
function cannot(row: HostCannot): OperationHandler {
  const message = `${row.method} ${row.path} is the Pieces OS operation ${row.api}.${row.name}, which this service cannot do: ${row.reason}.`;
  return async () => reply(new HttpError(501, message));
}

/** The route rows of the table (the route table takes them as it takes the generic path's). */
export const HOST_CANNOT_OPERATIONS = HOST_CANNOT.map((row) => ({
  name: row.name,
  api: row.api,
  method: row.method,
  path: row.path,
  handler: cannot(row),
}));
