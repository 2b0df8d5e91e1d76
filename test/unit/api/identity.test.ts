/**
 * The local identity: the PKCE flow as RFC 7636 has it (and its refusals), Auth0's authorize,
 * token, userinfo and logout over the same identity, the user's profile, vanity name, beta
 * status and providers, the users (selected in, authenticated from a token, disconnected), the
 * cloud allocation as a record, all kept across a restart and sent on the user socket.
 */
import { createHash } from 'node:crypto';
import { AllocationApi, Auth0Api, PKCEApi, ResponseError, UsersApi, type SeededPKCE } from '@pieces.app/pieces-os-client';
import { describe, expect, it } from 'vitest';
import { BASE, dump, jsonPost, setup } from '../support/harness.js';
import { sockets, until } from '../support/sockets.js';

const apis = (t: Awaited<ReturnType<typeof setup>>) => ({
  pkce: new PKCEApi(t.configuration),
  auth0: new Auth0Api(t.configuration),
  users: new UsersApi(t.configuration),
  allocation: new AllocationApi(t.configuration),
});

/** RFC 7636's S256, computed here independently of the service. */
const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** The status and body of a refused SDK call. */
async function refused(call: Promise<unknown>): Promise<{ status: number; body: string }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ResponseError)) throw new Error(`expected a refusal, got ${JSON.stringify(error)}`);
  return { status: error.response.status, body: await error.response.text() };
}

const REDIRECT = 'http://localhost:1000/pkce/response/code';

describe('the PKCE flow', () => {
  it('challenge, code, callback, token: the user is signed in, the socket sends it, a restart keeps it, disconnecting signs it out', async () => {
    const t = await setup();
    const { pkce, auth0 } = apis(t);
    await t.os.signOutOfOS();
    const stream = sockets(t).open('ws://localhost:1000/user/stream');
    await until(() => stream.frames.length === 1, 'the signed-out frame');
    expect(stream.frames).toEqual(['']);

    // The challenge: a verifier of RFC 7636's alphabet and length, its S256, a state that is the nonce.
    const { challenge } = await pkce.getChallenge();
    expect(challenge!.verifier).toMatch(/^[A-Za-z0-9._~-]{43,128}$/);
    expect(challenge!.challenge).toBe(s256(challenge!.verifier));
    expect([challenge!.method, challenge!.nonce]).toEqual(['S256', challenge!.state]);
    // RFC 7636, appendix B: the service computes S256 as the RFC's example does.
    const example = await t.fetch(
      `${BASE}/authorize?audience=a&scope=openid&response_type=code&client_id=c&code_challenge_method=S256&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&response_mode=query&redirect_uri=r`,
    );
    const exampleCode = ((await example.json()) as { code: string }).code;
    const exchanged = await t.fetch(`${BASE}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: 'c',
        code: exampleCode,
        redirect_uri: 'r',
        code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
      }),
    });
    expect(exchanged.status).toBe(200);

    const seed: SeededPKCE = {
      responseType: 'code',
      state: challenge!.state,
      nonce: challenge!.nonce,
      codeChallenge: challenge!.challenge,
      codeChallengeMethod: 'S256',
      scope: ['openid', 'profile', 'email'],
      clientId: 'pieces-cli',
      redirectUri: REDIRECT,
    };
    const { result } = await pkce.generateCode({ seededPKCE: seed });
    expect(result!.state).toBe(challenge!.state);
    // The callback: the code with the state it was issued with; another state is refused.
    expect((await pkce.respondWithCode({ code: result!.code, state: result!.state })).result).toEqual(result);
    expect((await refused(pkce.respondWithCode({ code: result!.code, state: 'forged' }))).status).toBe(400);

    // Refusals, as an OAuth server refuses: nothing changes, the code stays usable.
    const token = (over: Record<string, string>) => ({
      tokenizedPKCE: {
        grantType: 'authorization_code',
        clientId: 'pieces-cli',
        code: result!.code,
        redirectUri: REDIRECT,
        codeVerifier: challenge!.verifier,
        ...over,
      } as never,
    });
    const before = await dump(t.databaseName);
    for (const [over, error] of [
      [{ codeVerifier: `${challenge!.verifier}x` }, 'invalid_grant'],
      [{ codeVerifier: 'short' }, 'invalid_request'],
      [{ clientId: 'another-client' }, 'invalid_grant'],
      [{ redirectUri: 'http://localhost:9/elsewhere' }, 'invalid_grant'],
      [{ code: 'not-a-code' }, 'invalid_grant'],
      [{ grantType: 'refresh_token' }, 'unsupported_grant_type'],
    ] as const) {
      const { status, body } = await refused(pkce.generateToken(token(over)));
      expect([status, JSON.parse(body).error], JSON.stringify(over)).toEqual([400, error]);
    }
    expect(await dump(t.databaseName)).toBe(before);
    expect(stream.frames).toEqual(['']);

    // The right verifier: a token, and the user signed in (the socket sends the profile).
    const done = await pkce.generateToken(token({}));
    const accessToken = done.auth0!.oAuth.token!.accessToken;
    expect(done.auth0!.oAuth.token).toMatchObject({ tokenType: 'Bearer', expiresIn: 86400, scope: 'openid profile email' });
    await until(() => stream.frames.length === 2, 'the signed-in frame');
    const user = (await t.user.userSnapshot()).user!;
    expect(JSON.parse(stream.frames[1]!).id).toBe(user.id);
    expect(done.auth0!.user!.userId).toBe(user.id);
    // A code is used once.
    expect(JSON.parse((await refused(pkce.generateToken(token({})))).body).error).toBe('invalid_grant');
    expect(await t.user.userAccessToken()).toBe(accessToken);
    expect((await auth0.getAuth0UserInfo({ headers: { Authorization: `Bearer ${accessToken}` } })).userId).toBe(user.id);

    // A restart: still signed in, the token still good.
    const restarted = await setup({ databaseName: t.databaseName });
    expect((await restarted.user.userSnapshot()).user!.id).toBe(user.id);
    const again = apis(restarted);
    expect((await again.users.usersSnapshot()).iterable!.map((u) => u.id)).toEqual([user.id]);
    expect((await again.auth0.getAuth0UserInfo({ headers: { Authorization: `Bearer ${accessToken}` } })).userId).toBe(user.id);
    // Signing it out: no user left, its token revoked.
    expect(await again.users.usersDisconnectUser({ user: user.id })).toEqual({ iterable: [] });
    expect(await (await restarted.fetch(`${BASE}/user`)).json()).toEqual({});
    const revoked = await restarted.fetch(`${BASE}/userinfo`, { headers: { Authorization: `Bearer ${accessToken}` } });
    expect([revoked.status, revoked.headers.get('www-authenticate')]).toEqual([401, 'Bearer error="invalid_token"']);
    expect((await refused(again.users.usersDisconnectUser({ user: 'nobody' }))).status).toBe(404);
  });

  it('clears the flow: its codes are no longer exchanged', async () => {
    const t = await setup();
    const { pkce } = apis(t);
    const { challenge } = await pkce.getChallenge();
    const { result } = await pkce.generateCode({
      seededPKCE: {
        responseType: 'code',
        state: challenge!.state,
        nonce: challenge!.state,
        codeChallenge: challenge!.challenge,
        codeChallengeMethod: 'S256',
        scope: ['openid'],
        clientId: 'c',
      },
    });
    await pkce.clearPKCE();
    const { body } = await refused(
      pkce.generateToken({
        tokenizedPKCE: {
          grantType: 'authorization_code',
          clientId: 'c',
          code: result!.code,
          redirectUri: '',
          codeVerifier: challenge!.verifier,
        },
      }),
    );
    expect(JSON.parse(body)).toEqual({
      error: 'invalid_grant',
      error_description: 'The authorization code is unknown, expired or already used.',
    });
  });
});

describe('Auth0 over the local identity', () => {
  it('authorizes through a connection, exchanges the code, authenticates from the token (the provider kept), logs out', async () => {
    const t = await setup({ user: null });
    const { auth0, users } = apis(t);
    const verifier = 'a'.repeat(43);
    const resulted = await auth0.authorizeAuth0({
      audience: 'https://pieces.us.auth0.com/api/v2/',
      scope: ['openid', 'email'],
      responseType: 'code',
      clientId: 'desktop',
      codeChallengeMethod: 'S256',
      codeChallenge: s256(verifier),
      responseMode: 'form_post',
      state: 'xyz',
      redirectUri: REDIRECT,
      connection: 'github',
    });
    expect(resulted.state).toBe('xyz');
    const token = await auth0.exchangeForAuth0Token({
      grantType: 'authorization_code',
      clientId: 'desktop',
      code: resulted.code,
      redirectUri: REDIRECT,
      codeVerifier: verifier,
    });
    expect(token).toMatchObject({ tokenType: 'Bearer', scope: 'openid email' });
    // The token alone signs nobody in; authenticating from it does.
    expect(await (await t.fetch(`${BASE}/user`)).json()).toEqual({});
    const user = await users.authenticateFromOauthToken({ oAuthToken: token });
    expect(user.providers!.iterable.map((p) => [p.type, p.userId])).toEqual([['github', `github|${user.id}`]]);
    expect((await t.user.userProviders()).user!.providers!.iterable[0]!.type).toBe('github');
    const info = await auth0.getAuth0UserInfo({ headers: { Authorization: `Bearer ${token.accessToken}` } });
    expect(info.identities).toEqual([{ connection: 'github', provider: 'github', userId: `github|${user.id}`, isSocial: true }]);
    // An unknown token is refused.
    expect((await refused(users.authenticateFromOauthToken({ oAuthToken: { ...token, accessToken: 'forged' } }))).status).toBe(401);
    // Logging out signs out and revokes the client's tokens.
    expect(await auth0.auth0Logout({ clientId: 'desktop', returnTo: 'http://localhost:3000/' })).toBe(
      'Logged out; return to http://localhost:3000/.',
    );
    expect(await (await t.fetch(`${BASE}/user`)).json()).toEqual({});
    expect((await refused(users.authenticateFromOauthToken({ oAuthToken: token }))).status).toBe(401);
  });
});

describe('the user', () => {
  it('updates the profile and the vanity name (unique, validated), sets the beta status, selects another user, clears it', async () => {
    const t = await setup();
    const { users } = apis(t);
    const me = (await t.user.userSnapshot()).user!;
    const stream = sockets(t).open('ws://localhost:1000/user/stream');
    await until(() => stream.frames.length === 1, 'the profile');
    const updated = await t.user.updateUser({
      userProfile: { ...me, name: 'Ada', aesthetics: { theme: { dark: true }, font: { size: 1.5 } } },
    });
    expect([updated.name, updated.aesthetics.theme.dark, updated.aesthetics.font.size]).toEqual(['Ada', true, 1.5]);
    await until(() => stream.frames.length === 2, 'the updated profile');
    expect(JSON.parse(stream.frames[1]!).name).toBe('Ada');
    expect((await refused(t.user.userUpdateVanity({ userProfile: { ...me, vanityname: 'No Spaces' } }))).status).toBe(400);
    expect((await t.user.userUpdateVanity({ userProfile: { ...me, vanityname: 'ada-dev' } })).vanityname).toBe('ada-dev');
    expect((await t.user.refreshUser()).vanityname).toBe('ada-dev');

    const beta = await t.user.userBetaStatus({
      userBetaStatus: { user: me.id, descope: { vision: { from: { value: new Date('2026-01-01T00:00:00Z') } } } },
    });
    expect(beta.descope!.vision!.from!.value.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect((await t.user.userBetaStatus({ userBetaStatus: { user: me.id } })).descope!.vision).toEqual(beta.descope!.vision);
    expect((await t.user.userSnapshot()).user!.descope!.beta).toEqual(beta.descope!.vision);

    // Another user, selected in from an Auth0User: current and signed in; the vanity name is taken.
    const grace = await t.user.selectUser({ auth0User: { email: 'grace@example.test', name: 'Grace' } });
    expect([grace.name, grace.email]).toEqual(['Grace', 'grace@example.test']);
    expect((await t.user.userSnapshot()).user!.id).toBe(grace.id);
    expect((await users.usersSnapshot()).iterable!.map((u) => u.id)).toEqual([grace.id]);
    expect((await users.usersSpecificUserSnapshot({ user: me.id })).vanityname).toBe('ada-dev');
    const taken = await refused(t.user.userUpdateVanity({ userProfile: { ...grace, vanityname: 'ada-dev' } }));
    expect([taken.status, taken.body]).toEqual([409, `The vanity name ada-dev is taken by user ${me.id}.`]);
    // Selecting the first again by its id keeps its changes.
    expect((await t.user.selectUser({ auth0User: { userId: me.id } })).name).toBe('Ada');
    await t.user.selectUser({ auth0User: { email: 'grace@example.test' } });

    // A restart keeps it all; clearing the current user forgets it and signs out.
    const restarted = await setup({ databaseName: t.databaseName });
    expect((await restarted.user.userSnapshot()).user!.id).toBe(grace.id);
    await restarted.user.clearUser();
    expect(await (await restarted.fetch(`${BASE}/user`)).json()).toEqual({});
    expect((await refused(apis(restarted).users.usersSpecificUserSnapshot({ user: grace.id }))).status).toBe(404);
    expect((await restarted.os.signIntoOS()).name).toBe('Ada');
  });
});

describe('allocations', () => {
  it('keeps the signed-in user’s allocation as a record (never reached: no cloud), lists, updates, reconnects and disconnects it; creating one is 501', async () => {
    const t = await setup();
    const { allocation } = apis(t);
    const me = (await t.user.userSnapshot()).user!;
    const cloud = await t.allocations.allocationsConnectNewCloud({ userProfile: me });
    expect(cloud).toMatchObject({ id: me.id, user: me.id, status: { cloud: 'DISCONNECTED' }, project: '' });
    expect((await t.user.userSnapshot()).user!.allocation!.id).toBe(me.id);
    expect((await t.allocations.allocationsSnapshot()).iterable.map((a) => a.id)).toEqual([me.id]);
    const changed = await allocation.allocationUpdate({ allocationCloud: { ...cloud, project: 'pieces-ada', region: 'eu-west' } });
    expect([changed.project, changed.region]).toEqual(['pieces-ada', 'eu-west']);
    const running = await refused(allocation.allocationUpdate({ allocationCloud: { ...cloud, status: { cloud: 'RUNNING' } } }));
    expect(running).toEqual({
      status: 400,
      body: 'allocationCloud.status and its urls must be DISCONNECTED with no url: there is no cloud here to reach.',
    });
    const restarted = await setup({ databaseName: t.databaseName });
    expect((await apis(restarted).allocation.allocationSnapshot({ allocation: me.id })).project).toBe('pieces-ada');
    expect((await restarted.allocations.allocationsReconnectCloud({ allocationCloud: changed })).status.cloud).toBe('DISCONNECTED');
    expect(await restarted.allocations.allocationsDisconnectCloud({ allocationCloud: changed })).toBe(
      `The allocation of user ${me.id} is disconnected (there was no cloud to reach here).`,
    );
    expect((await restarted.allocations.allocationsSnapshot()).iterable).toEqual([]);
    expect((await refused(apis(restarted).allocation.allocationSnapshot({ allocation: me.id }))).status).toBe(404);
    const create = await refused(restarted.allocations.allocationsCreateNewAllocation({ allocationCloud: changed }));
    expect(create.status).toBe(501);
    expect(create.body).toMatch(
      /^POST \/allocations\/create is the Pieces OS operation AllocationsApi\.allocationsCreateNewAllocation, which this service cannot do: /,
    );
  });
});

describe('bad input', () => {
  it('is refused 4xx naming what is wrong, and changes nothing', async () => {
    const t = await setup();
    const me = (await t.user.userSnapshot()).user!;
    const profile = { id: me.id, aesthetics: { theme: { dark: false }, font: { size: 1 } } };
    const form = (body: string): RequestInit => ({
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body,
    });
    const before = await dump(t.databaseName);
    const cases: Array<[string, RequestInit, number, RegExp]> = [
      ['/user/update', { method: 'POST' }, 400, /The request body is required: send a UserProfile/],
      ['/user/update', jsonPost({ ...profile, colour: 'red' }), 400, /userProfile\.colour: unknown key \(UserProfile has no colour\)/],
      ['/user/update', jsonPost({ id: me.id }), 400, /userProfile\.aesthetics: missing/],
      ['/user/update', jsonPost({ ...profile, id: 'someone' }), 404, /No user someone is known here/],
      ['/user/update', jsonPost({ ...profile, vanityname: '-bad-' }), 400, /userProfile\.vanityname must be 3 to 63 lowercase letters/],
      ['/user/update/vanity', jsonPost(profile), 400, /userProfile\.vanityname is required/],
      ['/user/select', jsonPost({ name: 'x' }), 400, /auth0User\.user_id or auth0User\.email is required/],
      ['/user/select', jsonPost({ email: 1 }), 400, /auth0User\.email must be a string/],
      [
        '/user/beta/status',
        jsonPost({ user: me.id, descope: { vision: { from: 'soon' } } }),
        400,
        /userBetaStatus\.descope\.vision\.from: expected a GroupedTimestamp object/,
      ],
      ['/user/beta/status', jsonPost({ user: 'someone' }), 404, /No user someone is known here/],
      [
        '/users/authenticate/from_token',
        jsonPost({ access_token: 'x', token_type: 'MAC', expires_in: 1 }),
        400,
        /oAuthToken\.token_type must be Bearer/,
      ],
      [
        '/pkce/code',
        jsonPost({
          response_type: 'token',
          state: 's',
          nonce: 's',
          code_challenge: 'x',
          code_challenge_method: 'S256',
          scope: [],
          client_id: 'c',
        }),
        400,
        /response_type must be code/,
      ],
      [
        '/pkce/code',
        jsonPost({
          response_type: 'code',
          state: 's',
          nonce: 'n',
          code_challenge: 'x',
          code_challenge_method: 'S256',
          scope: [],
          client_id: 'c',
        }),
        400,
        /nonce must be the state/,
      ],
      [
        '/pkce/code',
        jsonPost({
          response_type: 'code',
          state: 's',
          nonce: 's',
          code_challenge: 'short',
          code_challenge_method: 'S256',
          scope: ['openid'],
          client_id: 'c',
        }),
        400,
        /code challenge must be the 43 base64url characters/,
      ],
      [
        '/pkce/code',
        jsonPost({
          response_type: 'code',
          state: 's',
          nonce: 's',
          code_challenge: 'x'.repeat(43),
          code_challenge_method: 'plain',
          scope: [],
          client_id: 'c',
        }),
        400,
        /code_challenge_method must be one of S256/,
      ],
      ['/pkce/response/code', form('code=x'), 400, /The form fields code and state are required/],
      ['/pkce/response/code', form('code=x&state=y'), 400, /The authorization code is unknown/],
      ['/pkce/response/code', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'code=x' }, 415, /must be a form/],
      [
        '/oauth/token',
        form('grant_type=authorization_code&client_id=c'),
        400,
        /"error":"invalid_request","error_description":"Missing required parameter: code\."/,
      ],
      [
        '/oauth/token',
        form('grant_type=authorization_code&code=a&code=b'),
        400,
        /"error":"invalid_request","error_description":"The field code is given more than once\."/,
      ],
      [
        '/pkce/token',
        jsonPost({ grant_type: 'authorization_code', client_id: 'c', code: 'x', redirect_uri: '' }),
        400,
        /"error":"invalid_request","error_description":"tokenizedPKCE\.code_verifier is required\."/,
      ],
      [
        '/authorize?audience=a&scope=openid&response_type=token&client_id=c&code_challenge_method=S256&code_challenge=x&response_mode=query',
        { method: 'GET' },
        400,
        /response_type must be one of code/,
      ],
      [
        '/authorize?audience=a&scope=openid&response_type=code&client_id=c&code_challenge_method=S256&code_challenge=' +
          'x'.repeat(43) +
          '&response_mode=query&connection=myspace',
        { method: 'GET' },
        400,
        /connection must be one of github/,
      ],
      ['/userinfo', { method: 'GET' }, 401, /An access token is required/],
      ['/userinfo', { method: 'GET', headers: { Authorization: 'Bearer nope' } }, 401, /not one this service issued/],
      ['/allocations/connect', jsonPost({ ...profile, id: 'someone' }), 400, /userProfile\.id must be the signed-in user's/],
      ['/allocation/update', jsonPost({ id: me.id }), 400, /allocationCloud\.user: missing/],
      ['/allocation/update', { method: 'POST' }, 400, /The request body is required: send an AllocationCloud/],
      [
        '/allocations/reconnect',
        jsonPost({
          id: me.id,
          user: me.id,
          urls: { base: { status: 'DISCONNECTED', url: '' }, id: { status: 'DISCONNECTED', url: '' } },
          status: { cloud: 'DISCONNECTED' },
          project: '',
        }),
        404,
        /No allocation .* is kept here/,
      ],
    ];
    for (const [path, init, status, message] of cases) {
      const response = await t.fetch(`${BASE}${path}`, init);
      expect([path, response.status], await response.clone().text()).toEqual([path, status]);
      expect(await response.text(), path).toMatch(message);
    }
    expect(await dump(t.databaseName)).toBe(before);
    // Signed out, the current user's operations are 401.
    await t.os.signOutOfOS();
    for (const path of ['/user/refresh', '/user/access_token']) expect((await t.fetch(`${BASE}${path}`)).status, path).toBe(401);
    expect((await t.fetch(`${BASE}/allocations/connect`, jsonPost(profile))).status).toBe(401);
  });
});
