/**
 * Handlers of PKCEApi and Auth0Api: a local authorization server for the local identity, as
 * RFC 7636 has it. A code is issued for the current user (there is no login page: the local
 * user is the one who authorizes) bound to its S256 challenge, client and redirect; it is
 * exchanged once, within 10 minutes, for an opaque access token by the client that holds the
 * verifier, and refused as an OAuth server refuses (400 `{error, error_description}`) otherwise.
 * Completing Pieces OS's own flow (generateToken) signs the user in; Auth0's token endpoint
 * only issues the token, which authenticateFromOauthToken (UsersApi) signs in with.
 */
import type { OperationContext } from '../context.js';
import { HttpError, readForm, readJson, reply, badRequest } from '../http.js';
import { auth0User, CONNECTIONS, TOKEN_LIFETIME_S, type CodeGrant, type TokenGrant } from '../models/identity.js';
import { s256 } from '../models/sha256.js';
import { array, embeddedSchema, knownKeys, object, oneOf, optional, required, string, type JsonObject } from '../validate.js';
import { currentId, editAuthorization, profile, readAuthorization, readIdentity, setSignedIn, signInThrough } from './user.js';

/** A refusal of the token endpoint, answered as RFC 6749 (section 5.2) has it. */
class OAuthError extends Error {
  constructor(
    readonly error: 'invalid_request' | 'invalid_grant' | 'unsupported_grant_type' | 'unsupported_response_type',
    readonly description: string,
  ) {
    super(description);
  }
}

/**
 * A token endpoint: its refusals (an OAuthError, or any other 400: a malformed request) answered
 * 400 `{error, error_description}` (JSON, as OAuth clients read it).
 */
const oauth =
  (handler: (context: OperationContext) => Promise<Response>) =>
  async (context: OperationContext): Promise<Response> => {
    try {
      return await handler(context);
    } catch (error) {
      const refusal =
        error instanceof OAuthError
          ? { error: error.error, error_description: error.description }
          : error instanceof HttpError && error.status === 400
            ? { error: 'invalid_request', error_description: error.message }
            : undefined;
      if (!refusal) throw error;
      return reply(refusal, { status: 400, headers: { 'Cache-Control': 'no-store' } });
    }
  };

/** A code challenge of S256: 43 base64url characters (a SHA-256 digest). */
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** A code verifier: 43 to 128 unreserved characters (RFC 7636, section 4.1). */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

interface Authorization {
  client: string;
  challenge: string;
  redirectUri?: string;
  state?: string;
  scope: string[];
  audience: string;
  connection?: string;
}

/** Issues a code for the current user, bound to the request's challenge, client and redirect. */
async function issueCode(context: OperationContext, request: Authorization): Promise<string> {
  if (!CHALLENGE.test(request.challenge)) {
    throw badRequest(
      `The code challenge must be the 43 base64url characters of an S256 digest; got ${JSON.stringify(request.challenge).slice(0, 80)}.`,
    );
  }
  const user = await currentId(context.service);
  const code = context.service.clock.newId();
  await editAuthorization(context, (state, now) => {
    const grant: CodeGrant = { user, issued: now, ...request };
    return { state: { ...state, codes: { ...state.codes, [code]: grant } }, result: undefined };
  });
  return code;
}

interface Exchange {
  grantType: string;
  client: string;
  code: string;
  redirectUri: string;
  verifier: string;
}

/** Exchanges a code for an access token (the code is used up); every refusal changes nothing. */
async function exchange(context: OperationContext, sent: Exchange): Promise<{ token: string; grant: TokenGrant; code: CodeGrant }> {
  if (sent.grantType !== 'authorization_code') {
    throw new OAuthError(
      'unsupported_grant_type',
      `grant_type ${JSON.stringify(sent.grantType)} is not served: only authorization_code (this server issues no refresh tokens).`,
    );
  }
  if (!VERIFIER.test(sent.verifier))
    throw new OAuthError('invalid_request', 'code_verifier must be 43 to 128 unreserved characters (RFC 7636, section 4.1).');
  const token = `${context.service.clock.newId()}.${context.service.clock.newId()}`;
  return editAuthorization(context, (state, now) => {
    const code = state.codes[sent.code];
    if (!code) throw new OAuthError('invalid_grant', 'The authorization code is unknown, expired or already used.');
    if (code.client !== sent.client) throw new OAuthError('invalid_grant', 'The authorization code was issued to another client.');
    if (code.redirectUri !== undefined && code.redirectUri !== sent.redirectUri) {
      throw new OAuthError('invalid_grant', 'redirect_uri is not the one the authorization code was issued for.');
    }
    if (s256(sent.verifier) !== code.challenge) throw new OAuthError('invalid_grant', 'Failed to verify code verifier.');
    const grant: TokenGrant = {
      user: code.user,
      client: code.client,
      scope: code.scope,
      audience: code.audience,
      issued: now,
      ...(code.connection ? { connection: code.connection } : {}),
    };
    const { [sent.code]: _used, ...codes } = state.codes;
    return { state: { ...state, codes, tokens: { ...state.tokens, [token]: grant } }, result: { token, grant, code } };
  });
}

/** The OAuthToken of an issued token. */
const oauthToken = (token: string, grant: TokenGrant): JsonObject => ({
  access_token: token,
  token_type: 'Bearer',
  expires_in: TOKEN_LIFETIME_S,
  scope: grant.scope.join(' '),
});

/** getChallenge: a new verifier, its S256 challenge and a state (the nonce is the state), kept as the current flow's until clearPKCE. */
export async function getChallenge(context: OperationContext) {
  const { clock } = context.service;
  const verifier = `${clock.newId()}.${clock.newId()}`;
  const state = clock.newId();
  const challenge = { state, nonce: state, challenge: s256(verifier), method: 'S256', verifier };
  await editAuthorization(context, (kept) => ({ state: { ...kept, challenge }, result: undefined }));
  return reply({ challenge });
}

/**
 * generateCode: a SeededPKCE; the local authorization server authorizes the current user at
 * once and answers the code with the seed's state (`result`). Only `response_type` code and
 * the S256 method are served; the nonce must be the state (the SDK: "they should be the same").
 */
export async function generateCode(context: OperationContext) {
  const path = 'seededPKCE';
  const raw = await readJson(context.request, context.service.maxBodyBytes);
  if (raw === undefined) throw badRequest('The request body is required: send a SeededPKCE (from GET /pkce/challenge).');
  const seed = object(raw, path);
  knownKeys(
    seed,
    [
      'schema',
      'response_type',
      'state',
      'nonce',
      'redirect_uri',
      'code_challenge',
      'code_challenge_method',
      'domain',
      'audience',
      'screen_hint',
      'prompt',
      'organization',
      'invitation',
      'scope',
      'client_id',
      'ADDITIONAL_PARAMETERS',
      'response_mode',
    ],
    path,
    'SeededPKCE',
  );
  optional(seed, 'schema', path, embeddedSchema);
  const type = required(seed, 'response_type', path, (v, p) => oneOf(v, ['UNKNOWN', 'code', 'token', 'id_token'], p));
  if (type !== 'code') throw badRequest(`${path}.response_type must be code: only the authorization code flow (PKCE) is served.`);
  const state = required(seed, 'state', path, string);
  const nonce = required(seed, 'nonce', path, string);
  if (nonce !== state) throw badRequest(`${path}.nonce must be the state (the comparator of the state the callback brings back).`);
  required(seed, 'code_challenge_method', path, (v, p) => oneOf(v, ['S256'], p));
  const challenge = required(seed, 'code_challenge', path, string);
  const scope = required(seed, 'scope', path, array).map((v, i) =>
    oneOf(v, ['UNKNOWN', 'offline_access', 'email', 'profile', 'openid'], `${path}.scope[${i}]`),
  );
  const client = required(seed, 'client_id', path, string);
  const redirectUri = optional(seed, 'redirect_uri', path, string);
  for (const key of ['domain', 'audience', 'organization', 'invitation']) optional(seed, key, path, string);
  optional(seed, 'screen_hint', path, (v, p) => oneOf(v, ['UNKNOWN', 'signup'], p));
  optional(seed, 'prompt', path, (v, p) => oneOf(v, ['UNKNOWN', 'login', 'none'], p));
  optional(seed, 'response_mode', path, (v, p) => oneOf(v, ['UNKNOWN', 'form_post', 'web_message', 'fragment', 'query'], p));
  const extra = optional(seed, 'ADDITIONAL_PARAMETERS', path, object);
  if (extra) {
    const at = `${path}.ADDITIONAL_PARAMETERS`;
    knownKeys(extra, ['access_type', 'display'], at, 'SeededPKCEADDITIONALPARAMETERS');
    optional(extra, 'access_type', at, (v, p) => oneOf(v, ['UNKNOWN', 'offline'], p));
    optional(extra, 'display', at, (v, p) => oneOf(v, ['UNKNOWN', 'popup'], p));
  }
  const audience = (seed.audience as string | undefined) ?? context.url.origin;
  const code = await issueCode(context, {
    client,
    challenge,
    scope,
    audience,
    state,
    ...(redirectUri === undefined ? {} : { redirectUri }),
  });
  return reply({ result: { code, state } });
}

/**
 * respondWithCode: the authorization callback (a form: code, state): the code must be one
 * issued and not yet exchanged, and the state the one it was issued with (the CSRF check).
 * Answers the ResultedPKCE; changes nothing.
 */
export async function respondWithCode(context: OperationContext) {
  const form = await readForm(context.request, context.service.maxBodyBytes);
  const code = form.code;
  const state = form.state;
  if (code === undefined || state === undefined)
    throw badRequest('The form fields code and state are required (the authorization callback’s).');
  for (const key of Object.keys(form))
    if (!['code', 'state', 'schema'].includes(key))
      throw badRequest(`${key} is not a field of the callback (its fields: code, state, schema).`);
  const grant = (await readAuthorization(context)).codes[code];
  if (!grant) throw badRequest('The authorization code is unknown, expired or already used.');
  if ((grant.state ?? '') !== state) throw badRequest('The state is not the one the authorization code was issued with.');
  return reply({ result: { code, state } });
}

/** The Auth0 of a completed flow: its client, audience, redirect, token and user. */
async function auth0Of(context: OperationContext, token: string, grant: TokenGrant, code: CodeGrant): Promise<JsonObject> {
  const state = await readIdentity(context.service);
  const user = (await profile(context.service, grant.user, state))!;
  return {
    domain: context.url.origin,
    client: grant.client,
    audience: grant.audience,
    redirects: code.redirectUri ? { authenticated: code.redirectUri } : {},
    oAuth: { token: oauthToken(token, grant) },
    user: auth0User(user, state.users[grant.user]),
  };
}

/**
 * generateToken: a TokenizedPKCE: the code exchanged for an access token (refused as the token
 * endpoint refuses), and the user signed in. Answers the flow's Auth0 (`auth0`: token and user).
 */
export const generateToken = oauth(async (context) => {
  const path = 'tokenizedPKCE';
  const raw = await readJson(context.request, context.service.maxBodyBytes);
  if (raw === undefined) throw badRequest('The request body is required: send a TokenizedPKCE (the code and its verifier).');
  const sent = object(raw, path);
  knownKeys(sent, ['schema', 'grant_type', 'client_id', 'code', 'redirect_uri', 'code_verifier', 'audience'], path, 'TokenizedPKCE');
  optional(sent, 'schema', path, embeddedSchema);
  const grantType = required(sent, 'grant_type', path, (v, p) => oneOf(v, ['UNKNOWN', 'refresh_token', 'authorization_code'], p));
  const [client, code, redirectUri, verifier] = ['client_id', 'code', 'redirect_uri', 'code_verifier'].map((key) =>
    required(sent, key, path, string),
  ) as [string, string, string, string];
  optional(sent, 'audience', path, string);
  const done = await exchange(context, { grantType, client, code, redirectUri, verifier });
  await signInThrough(context, done.grant.user, done.code.connection);
  return reply({ auth0: await auth0Of(context, done.token, done.grant, done.code) });
});

/** clearPKCE: the current flow is cleared: its challenge, and every code not yet exchanged (tokens stay). */
export async function clearPKCE(context: OperationContext) {
  await editAuthorization(context, (kept) => ({ state: { ...kept, challenge: undefined, codes: {} }, result: undefined }));
  return reply();
}

/**
 * authorizeAuth0: Auth0's /authorize as the local authorization server answers it: the current
 * user authorizes at once; answers the ResultedPKCE (code and state). `connection` names the
 * provider the user signs in through (an ExternalProviderTypeEnum value).
 */
export async function authorizeAuth0(context: OperationContext) {
  const query = context.url.searchParams;
  const one = (key: string, needed: boolean): string | undefined => {
    const values = query.getAll(key);
    if (values.length > 1) throw badRequest(`The query parameter ${key} is given more than once.`);
    if (needed && values.length === 0) throw badRequest(`The query parameter ${key} is required.`);
    return values[0];
  };
  const audience = one('audience', true)!;
  const scope = one('scope', true)!
    .split(' ')
    .filter(Boolean)
    .map((value) => oneOf(value, ['openid', 'email', 'profile', 'offline_access'], 'scope'));
  oneOf(one('response_type', true), ['code'], 'response_type');
  const client = one('client_id', true)!;
  oneOf(one('code_challenge_method', true), ['S256'], 'code_challenge_method');
  const challenge = one('code_challenge', true)!;
  oneOf(one('response_mode', true), ['form_post', 'fragment', 'query', 'web_message'], 'response_mode');
  const state = one('state', false);
  const redirectUri = one('redirect_uri', false);
  const connection = one('connection', false);
  if (connection !== undefined) oneOf(connection, CONNECTIONS, 'connection');
  one('prompt', false);
  const code = await issueCode(context, {
    client,
    challenge,
    scope,
    audience,
    ...(state === undefined ? {} : { state }),
    ...(redirectUri === undefined ? {} : { redirectUri }),
    ...(connection === undefined ? {} : { connection }),
  });
  return reply({ code, state: state ?? '' });
}

/** exchangeForAuth0Token: Auth0's token endpoint (a form): the code exchanged for an OAuthToken, or refused as OAuth refuses. */
export const exchangeForAuth0Token = oauth(async (context) => {
  const form = await readForm(context.request, context.service.maxBodyBytes);
  const fields = ['grant_type', 'client_id', 'code', 'redirect_uri', 'code_verifier'];
  for (const key of Object.keys(form)) {
    if (![...fields, 'audience', 'schema'].includes(key))
      throw new OAuthError('invalid_request', `${key} is not a parameter of the token request.`);
  }
  const missing = fields.find((key) => form[key] === undefined);
  if (missing) throw new OAuthError('invalid_request', `Missing required parameter: ${missing}.`);
  const done = await exchange(context, {
    grantType: form.grant_type!,
    client: form.client_id!,
    code: form.code!,
    redirectUri: form.redirect_uri!,
    verifier: form.code_verifier!,
  });
  return reply(oauthToken(done.token, done.grant), { headers: { 'Cache-Control': 'no-store' } });
});

/** The live grant of the request's bearer token, or a 401 as a resource server answers one. */
async function bearer(context: OperationContext): Promise<TokenGrant> {
  const header = context.request.headers.get('authorization') ?? '';
  const token = /^Bearer (\S+)$/i.exec(header)?.[1];
  const refuse = (error: string, message: string) =>
    new HttpError(401, message, { 'WWW-Authenticate': `Bearer${error ? ` error="${error}"` : ''}` });
  if (!token) throw refuse('', 'An access token is required: send Authorization: Bearer <access token>.');
  const grant = (await readAuthorization(context)).tokens[token];
  if (!grant) throw refuse('invalid_token', 'The access token is not one this service issued, or it expired or was revoked.');
  return grant;
}

/** getAuth0UserInfo: the Auth0User of the bearer token's user. */
export async function getAuth0UserInfo(context: OperationContext) {
  const grant = await bearer(context);
  const state = await readIdentity(context.service);
  const user = await profile(context.service, grant.user, state);
  if (!user)
    throw new HttpError(401, 'The access token’s user is no longer known here.', { 'WWW-Authenticate': 'Bearer error="invalid_token"' });
  return reply(auth0User(user, state.users[grant.user]));
}

/**
 * auth0Logout: the current user's session ends: signed out, and its tokens issued to `client_id`
 * (every one without it) revoked. Answers a text naming where to return (no redirect is followed).
 */
export async function auth0Logout(context: OperationContext) {
  const client = context.url.searchParams.get('client_id');
  const returnTo = context.url.searchParams.get('returnTo');
  const user = await currentId(context.service);
  await editAuthorization(context, (state) => ({
    state: {
      ...state,
      tokens: Object.fromEntries(
        Object.entries(state.tokens).filter(([, grant]) => grant.user !== user || (client !== null && grant.client !== client)),
      ),
    },
    result: undefined,
  }));
  await setSignedIn(context, false);
  return reply(returnTo ? `Logged out; return to ${returnTo}.` : 'Logged out.', { type: 'text' });
}
