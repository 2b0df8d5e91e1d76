/**
 * What no host of this service can do (src/core/handlers/host-cannot.ts): each operation of the
 * table, called as the SDK calls it, is answered 501 naming the operation and why, never the
 * catalogue's "does not serve" 404, and changes nothing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AllocationsApi,
  ExternalProviderTypeEnum,
  GithubApi,
  OSAppletEnum,
  ResponseError,
  WellKnownApi,
  type Configuration,
  type OSApi,
} from '@pieces.app/pieces-os-client';
import { describe, expect, it, vi } from 'vitest';
import { HOST_CANNOT, type HostCannotName } from '../../../src/core/handlers/host-cannot.js';
import { BASE, dump, setup } from '../support/harness.js';

/** An allocation, as AllocationsApi takes it. */
const CLOUD = {
  id: 'u',
  user: 'u',
  urls: { base: { status: 'DISCONNECTED', url: '' }, id: { status: 'DISCONNECTED', url: '' } },
  status: { cloud: 'DISCONNECTED' },
  project: '',
} as const;

/** Each operation as a client of the SDK calls it. */
const CALLS: Record<HostCannotName, (os: OSApi, configuration: Configuration) => Promise<unknown>> = {
  osFilesystemPickFiles: (os) => os.osFilesystemPickFiles({ filePickerInput: { allowedExtensions: ['ts'], allowMultiple: true } }),
  osFilesystemPickFolders: (os) => os.osFilesystemPickFolders(),
  osFilesystemFileOpen: (os) => os.osFilesystemFileOpen({ body: '/home/someone/notes.md' }),
  osBrowserUrlOpen: (os) => os.osBrowserUrlOpen({ body: 'https://pieces.app' }),
  // A GET whose SDK method takes a body no fetch can send with a GET: called without it.
  osFilesystemFileReadStreamed: (os) => os.osFilesystemFileReadStreamed(),
  osFilesystemPathVerify: (os) => os.osFilesystemPathVerify({ body: '/home/someone' }),
  osTerminate: (os) => os.osTerminate(),
  osRestart: (os) => os.osRestart(),
  osAppletTerminate: (os) => os.osAppletTerminate({ terminatingOSServerApplet: { port: 1000, type: OSAppletEnum.Copilot } }),
  osAppletRestart: (os) => os.osAppletRestart({ inactiveOSServerApplet: { type: OSAppletEnum.Copilot } }),
  osMemoryOptimize: (os) => os.osMemoryOptimize(),
  allocationsCreateNewAllocation: (_os, configuration) =>
    new AllocationsApi(configuration).allocationsCreateNewAllocation({ allocationCloud: CLOUD }),
  allocationsDeleteAllocation: (_os, configuration) =>
    new AllocationsApi(configuration).allocationsDeleteAllocation({ allocationCloud: CLOUD }),
  osNanoModelsPrepare: (os) => os.osNanoModelsPrepare({ nanoModelsPreparationInput: { tasks: {} } }),
  osUpdateCheck: (os) => os.osUpdateCheck({ uncheckedOSServerUpdate: {} }),
  osUpdateCheckStream: (os) => os.osUpdateCheckStream(),
  linkProvider: (os) => os.linkProvider({ seededExternalProvider: { type: ExternalProviderTypeEnum.Github } }),
  getInstallationPath: (_, configuration) => new WellKnownApi(configuration).getInstallationPath(),
  importGithubGists: (_, configuration) =>
    new GithubApi(configuration).importGithubGists({ automatic: true, seededGithubGistsImport: { application: 'an-application' } }),
};

describe('what no host can do', () => {
  it.each(HOST_CANNOT)('$name: 501 naming the operation and why, through the SDK; nothing changed, nothing announced', async (row) => {
    const warn = vi.fn();
    const t = await setup({ warn });
    const before = await dump(t.databaseName);
    const error = await CALLS[row.name](t.os, t.configuration).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ResponseError);
    const response = (error as ResponseError).response;
    expect(response.status).toBe(501);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const text = await response.text();
    expect(text).toContain(`${row.method} ${row.path}`);
    expect(text).toContain(`${row.api}.${row.name}`);
    expect(text).toContain(row.reason);
    expect(text).not.toMatch(/does not serve/);
    expect(await dump(t.databaseName)).toBe(before);
    expect(t.changes).toEqual([]);
    // Not an unserved operation: nothing is warned.
    expect(warn).not.toHaveBeenCalled();
    // The path is the operation's: OPTIONS names its method; a hostile body changes nothing either.
    const options = await t.fetch(`${BASE}${row.path}`, { method: 'OPTIONS' });
    expect(options.headers.get('allow')?.split(', ')).toContain(row.method);
    if (row.method === 'POST') {
      const hostile = await t.fetch(`${BASE}${row.path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"a":',
      });
      expect(hostile.status).toBe(501);
      expect(await dump(t.databaseName)).toBe(before);
    }
  });

  it('is listed in docs/operations.md, each operation with its method and path', () => {
    const docs = readFileSync(join(process.cwd(), 'docs/operations.md'), 'utf8');
    const section = docs.slice(docs.indexOf('### What no host can do'), docs.indexOf('## Discovery, connect and the user'));
    for (const row of HOST_CANNOT) expect(section, row.name).toContain(`| ${row.name} | \`${row.method} ${row.path}\` |`);
    expect(section.match(/^\| [a-z]\w+ \| `/gm)).toHaveLength(HOST_CANNOT.length);
  });
});
