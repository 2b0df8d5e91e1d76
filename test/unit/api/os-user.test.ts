/**
 * The OS and the user: signing the local profile in and out (GET /user and the
 * user socket follow, kept across restarts), the applet launch, allocations
 * answered as for a user with no cloud, the vision status (long-term memory
 * off until activated: test/unit/api/pattern-engine.test.ts) and its socket, and the start-up details clients read: connect's
 * application id, OS version and user name, the OS's own application entry.
 */
import { AllocationStatusEnum, OSAppletEnum, PlatformEnum } from '@pieces.app/pieces-os-client';
import { describe, expect, it } from 'vitest';
import { PIECES_OS_VERSION } from '../../../src/shared/version.js';
import { BASE, dump, jsonPost, setup } from '../support/harness.js';
import { sockets, until } from '../support/sockets.js';

describe('signing in and out', () => {
  it('signs the local profile out and in again: GET /user and the user socket follow, and it is kept across restarts', async () => {
    const t = await setup();
    const signedIn = (await t.user.userSnapshot()).user!;
    expect(signedIn.name).toBe('Local user');
    const stream = sockets(t).open('ws://localhost:1000/user/stream');
    await until(() => stream.frames.length === 1, 'the profile');
    expect(JSON.parse(stream.frames[0]!)).toEqual(JSON.parse(JSON.stringify((await (await t.fetch(`${BASE}/user`)).json()).user)));

    expect(await t.os.signOutOfOS()).toEqual({ iterable: [] });
    expect(await (await t.fetch(`${BASE}/user`)).json()).toEqual({});
    await until(() => stream.frames.length === 2, 'the signed-out frame');
    expect(stream.frames[1]).toBe('');
    // Kept: a restarted service is still signed out; its socket opens with the empty frame.
    const restarted = await setup({ databaseName: t.databaseName });
    expect(await (await restarted.fetch(`${BASE}/user`)).json()).toEqual({});
    const late = sockets(restarted).open('ws://localhost:1000/user/stream');
    await until(() => late.frames.length === 1, 'the empty frame');
    expect(late.frames).toEqual(['']);

    const profile = await restarted.os.signIntoOS();
    expect(profile.id).toBe(signedIn.id);
    expect((await restarted.user.userSnapshot()).user!.id).toBe(signedIn.id);
    await until(() => late.frames.length === 2, 'the profile again');
    expect(JSON.parse(late.frames[1]!).id).toBe(signedIn.id);
    // Connect carries the user while signed in, and not when signed out.
    const connect = async () =>
      (await (
        await restarted.fetch(`${BASE}/connect`, jsonPost({ application: { name: 'VS_CODE', version: '1', platform: 'LINUX' } }))
      ).json()) as { user?: { name: string } };
    expect((await connect()).user?.name).toBe('Local user');
    await restarted.os.signOutOfOS();
    expect((await connect()).user).toBeUndefined();
    // A reset goes back to the configured state: signed in.
    await restarted.service.reset();
    expect((await restarted.user.userSnapshot()).user?.id).toBe(signedIn.id);
  });

  it('a service configured without a user starts signed out; signing in gives the local profile', async () => {
    const t = await setup({ user: null });
    expect(await (await t.fetch(`${BASE}/user`)).json()).toEqual({});
    const stream = sockets(t).open('ws://localhost:1000/user/stream');
    await until(() => stream.frames.length === 1, 'the empty frame');
    expect(stream.frames[0]).toBe('');
    expect((await t.os.signIntoOS()).username).toBe('local');
    await until(() => stream.frames.length === 2, 'the profile');
    expect(JSON.parse(stream.frames[1]!).username).toBe('local');
  });
});

describe('the OS', () => {
  it('launches an applet: the port this service answers on, the type asked for', async () => {
    const t = await setup({ bases: ['http://localhost:39300'] });
    const applet = await (await t.fetch('http://localhost:39300/os/applet/launch', jsonPost({ type: 'COPILOT' }))).json();
    expect(applet).toEqual({
      port: 39300,
      type: OSAppletEnum.Copilot,
      handler: { type: 'pieces-os-worker', isFolder: false, isAsset: false },
    });
    const other = await setup();
    const sdk = await other.os.osAppletLaunch({ inactiveOSServerApplet: { type: OSAppletEnum.SavedMaterials } });
    expect([sdk.port, sdk.type]).toEqual([1000, 'SAVED_MATERIALS']);
  });

  it('answers connect with the application id, the OS version and the user name; lists its own OS_SERVER entry', async () => {
    const t = await setup();
    const context = await t.connector.connect({
      seededConnectorConnection: { application: { name: 'OPEN_SOURCE', version: '0.0.1', platform: PlatformEnum.Linux } } as never,
    });
    expect(context.application.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(context.health.os.version).toBe(PIECES_OS_VERSION);
    expect(context.user?.name).toBe('Local user');
    const applications = await t.applications.applicationsSnapshot();
    expect(applications.iterable[0]).toMatchObject({ id: context.os, name: 'OS_SERVER', version: PIECES_OS_VERSION, onboarded: true });
    expect((await t.applications.applicationsSpecificApplicationSnapshot({ application: context.os })).name).toBe('OS_SERVER');
  });

  it('answers allocations as for a user with no cloud (test/unit/api/identity.test.ts: the record kept)', async () => {
    const t = await setup();
    const user = (await t.user.userSnapshot()).user!;
    const allocation = await t.allocations.allocationsConnectNewCloud({ userProfile: user });
    expect(allocation).toMatchObject({ id: user.id, user: user.id, status: { cloud: AllocationStatusEnum.Disconnected }, project: '' });
    expect(allocation.urls.base.status).toBe(AllocationStatusEnum.Disconnected);
    expect(await t.allocations.allocationsDisconnectCloud({ allocationCloud: allocation })).toBe(
      `The allocation of user ${user.id} is disconnected (there was no cloud to reach here).`,
    );
    expect(await t.allocations.allocationsDisconnectCloud({ allocationCloud: allocation })).toBe(
      'The local user has no cloud allocation: nothing to disconnect.',
    );
  });

  it('has long-term memory off until activated: the vision status, and its socket’s first frame at once', async () => {
    const t = await setup();
    const status = await t.workstream.workstreamPatternEngineProcessorsVisionStatus();
    expect(status).toEqual({ vision: { degraded: false } });
    expect(status.vision?.activation).toBeUndefined();
    const stream = sockets(t).open('ws://localhost:1000/workstream_pattern_engine/processors/vision/status/stream');
    await until(() => stream.frames.length === 1, 'the status');
    expect(JSON.parse(stream.frames[0]!)).toEqual({ vision: { degraded: false } });
    expect(stream.events).toEqual(['open']);
  });

  it('refuses bad input and changes nothing', async () => {
    const t = await setup();
    const before = await dump(t.databaseName);
    const cases: Array<[string, RequestInit, number, RegExp]> = [
      ['/os/applet/launch', { method: 'POST' }, 400, /The request body is required: send an InactiveOSServerApplet/],
      ['/os/applet/launch', jsonPost({}), 400, /inactiveOSServerApplet\.type is required/],
      ['/os/applet/launch', jsonPost({ type: 'CHAT' }), 400, /inactiveOSServerApplet\.type must be one of UNKNOWN_APPLET_MODULE, COPILOT/],
      ['/os/applet/launch', jsonPost({ type: 'COPILOT', colour: 1 }), 400, /colour is not a field of InactiveOSServerApplet/],
      ['/allocations/connect', jsonPost('[1]'), 400, /userProfile: expected a UserProfile object, got an array/],
      ['/allocations/disconnect', jsonPost('"x"'), 400, /allocationCloud: expected a AllocationCloud object/],
      ['/os/sign_in', { method: 'GET' }, 405, /use POST/],
      ['/workstream_pattern_engine/processors/vision/status/stream', {}, 426, /is a WebSocket/],
      [
        '/workstream_pattern_engine/processors/vision/activate',
        jsonPost({ vision: { activation: { from: 'now' } } }),
        400,
        /workstreamPatternEngineStatus\.vision\.activation\.from/,
      ],
    ];
    for (const [path, init, status, message] of cases) {
      const response = await t.fetch(`${BASE}${path}`, init);
      expect(response.status, path).toBe(status);
      expect(await response.text(), path).toMatch(message);
    }
    expect(await dump(t.databaseName)).toBe(before);
  });
});
