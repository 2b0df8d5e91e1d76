import { describe, expect, it } from 'vitest';
import {
  ApplicationFromJSON,
  ApplicationNameEnum,
  ApplicationsFromJSON,
  DetectedExternalApplicationsFromJSON,
  PlatformEnum,
  PrivacyEnum,
  instanceOfApplication,
  instanceOfApplications,
  instanceOfDetectedExternalApplications,
  type Application,
} from '@pieces.app/pieces-os-client';
import { BASE, application, dump, jsonPost, setup } from '../support/harness.js';

const sdkApplication = (overrides: Partial<Application> = {}): Application => ({
  id: crypto.randomUUID(),
  name: ApplicationNameEnum.Jetbrains,
  version: '2026.1',
  platform: PlatformEnum.Macos,
  onboarded: false,
  privacy: PrivacyEnum.Anonymous,
  ...overrides,
});

const CHROME_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.8078.73 Safari/537.36';

/** The applications registered by clients: every snapshot also lists the OS's own entry (OS_SERVER) first. */
const registered = (all: { iterable: Array<{ name: string; id: string; version: string }> }) => {
  expect(all.iterable[0]!.name).toBe('OS_SERVER');
  return all.iterable.filter((a) => a.name !== 'OS_SERVER');
};

describe('applicationsRegister', () => {
  it('registers an application sent by the SDK and returns it', async () => {
    const t = await setup();
    const sent = sdkApplication({ capabilities: 'BLENDED' as never, mechanism: 'MANUAL' as never, automaticUnload: true });
    const registered = await t.applications.applicationsRegister({ application: sent });
    expect(instanceOfApplication(registered)).toBe(true);
    expect(registered).toMatchObject(sent);
  });

  it('upserts by id: registering the same id again updates it', async () => {
    const t = await setup();
    const first = sdkApplication({ version: '1.0.0' });
    await t.applications.applicationsRegister({ application: first });
    await t.applications.applicationsRegister({ application: { ...first, version: '2.0.0' } });
    const all = registered(await t.applications.applicationsSnapshot());
    expect(all).toHaveLength(1);
    expect(all[0]!.version).toBe('2.0.0');
  });

  it('with no body registers the calling browser on platform WEB, with one stable id', async () => {
    const t = await setup({ userAgent: CHROME_UA });
    const one = await t.applications.applicationsRegister({});
    const two = await t.applications.applicationsRegister({});
    expect(instanceOfApplication(one)).toBe(true);
    expect(one.platform).toBe('WEB');
    expect(one.name).toBe('GOOGLE_CHROME_EXTENSION_MV3');
    expect(one.version).toBe('156.0.8078.73');
    expect(two.id).toBe(one.id);
    expect(registered(await t.applications.applicationsSnapshot())).toHaveLength(1);
  });

  it('keeps every field of the SDK Application, refuses other fields and bad nested values, and rejects bad enums listing the allowed values', async () => {
    const t = await setup();
    const schema = { migration: 0, semantic: 'MAJOR_0_MINOR_0_PATCH_1' };
    const body = application({
      schema,
      capabilities: 'LOCAL',
      mechanism: 'MANUAL',
      automaticUnload: false,
      enrichment: { tags: 2, hints: 0 },
    });
    const ok = await t.fetch(`${BASE}/applications/register`, jsonPost(body));
    expect(await ok.json()).toMatchObject(body);
    const before = await dump(t.databaseName);
    for (const [extra, message] of [
      [{ enrichment: { tags: true } }, 'application.enrichment.tags must be a number'],
      [{ enrichment: { colour: 1 } }, 'application.enrichment.colour is not a field of SeededAssetEnrichment'],
      [{ schema: { migration: 0 } }, 'application.schema.semantic is required'],
      [{ nickname: 'code' }, 'application.nickname is not a field of Application'],
    ] as const) {
      const refused = await t.fetch(`${BASE}/applications/register`, jsonPost(application(extra)));
      expect(refused.status).toBe(400);
      expect(await refused.text()).toContain(message);
    }
    expect(await dump(t.databaseName)).toBe(before);
    const bad = await t.fetch(`${BASE}/applications/register`, jsonPost(application({ platform: 'AMIGA' })));
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const message = await bad.text();
    expect(message).toContain('application.platform');
    for (const value of Object.values(PlatformEnum)) expect(message).toContain(value);
  });

  it.each([
    ['a missing name', { name: undefined }, 'application.name is required'],
    ['a non-UUID id', { id: 'abc' }, 'application.id must be a UUID'],
    ['a wrong type', { onboarded: 'yes' }, 'application.onboarded must be true or false'],
  ])('refuses %s', async (_what, overrides, message) => {
    const t = await setup();
    const response = await t.fetch(`${BASE}/applications/register`, jsonPost(application(overrides)));
    expect(response.status).toBe(400);
    expect(await response.text()).toContain(message);
    expect(registered(await t.applications.applicationsSnapshot())).toEqual([]);
  });
});

describe('applicationsSnapshot and applicationsSpecificApplicationSnapshot', () => {
  it('lists registered applications, each decodable, and finds one by id', async () => {
    const t = await setup();
    const a = sdkApplication();
    const b = sdkApplication({ name: ApplicationNameEnum.VsCode });
    await t.applications.applicationsRegister({ application: a });
    await t.applications.applicationsRegister({ application: b });
    const raw = await (await t.fetch(`${BASE}/applications`)).json();
    expect(instanceOfApplications(ApplicationsFromJSON(raw))).toBe(true);
    expect(
      registered(ApplicationsFromJSON(raw))
        .map((x) => x.id)
        .sort(),
    ).toEqual([a.id, b.id].sort());
    const one = await (await t.fetch(`${BASE}/applications/${b.id}`)).json();
    expect(instanceOfApplication(ApplicationFromJSON(one))).toBe(true);
    expect(one.id).toBe(b.id);
    expect(one.engagement).toEqual({ interactions: 0, keyboard: 0, installations: 0, updates: 0 });
  });

  it('answers 404 for an unknown id and 400 for a non-UUID one', async () => {
    const t = await setup();
    const unknown = crypto.randomUUID();
    const missing = await t.fetch(`${BASE}/applications/${unknown}`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain(unknown);
    const bad = await t.fetch(`${BASE}/applications/not-a-uuid`);
    expect(bad.status).toBe(400);
    await expect(t.applications.applicationsSpecificApplicationSnapshot({ application: unknown })).rejects.toMatchObject({
      response: { status: 404 },
    });
  });
});

describe('external applications', () => {
  it('detects the browser from its user agent, plus applications a page reported', async () => {
    const t = await setup({ userAgent: CHROME_UA });
    await t.storage.putExternalApplications([{ name: 'Obsidian', version: '1.5.0' }]);
    const raw = await (await t.fetch(`${BASE}/applications/external`)).json();
    expect(instanceOfDetectedExternalApplications(DetectedExternalApplicationsFromJSON(raw))).toBe(true);
    expect(raw.iterable).toEqual([
      { name: 'Google Chrome', version: '156.0.8078.73' },
      { name: 'Obsidian', version: '1.5.0' },
    ]);
    const sdk = await t.applications.applicationsExternalSnapshot();
    expect(sdk.iterable).toHaveLength(2);
  });

  it('related lists the detected ones, then integrable applications not installed, without versions', async () => {
    const t = await setup({ userAgent: CHROME_UA });
    await t.storage.putExternalApplications([{ name: 'Obsidian', version: '1.5.0' }]);
    const related = await t.applications.applicationsExternalRelated();
    const names = related.iterable.map((a) => a.name);
    expect(names.slice(0, 2)).toEqual(['Google Chrome', 'Obsidian']);
    expect(names).toContain('Visual Studio Code');
    expect(names.filter((n) => n === 'Obsidian' || n === 'Google Chrome')).toHaveLength(2);
    expect(related.iterable.slice(2).every((a) => a.version === undefined)).toBe(true);
  });
});
