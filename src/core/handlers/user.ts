/**
 * Handlers of UserApi and UsersApi over the local identity (src/core/models/identity.ts): the
 * current user, signed in or out (kept across restarts, sent on the user socket), its profile's
 * changes and vanity name, the users this store knows, a user selected in or authenticated from a
 * token the local authorization server issued (src/core/handlers/pkce.ts), and signing one out.
 */
import type { OperationContext, ServiceContext } from '../context.js';
import { badRequest, HttpError, notFound, readJson, reply } from '../http.js';
import {
  AUTHORIZATION_KEY,
  emptyAuthorization,
  emptyIdentity,
  IDENTITY_KEY,
  live,
  profileOf,
  VANITY,
  type AuthorizationState,
  type IdentityState,
  type UserRecord,
} from '../models/identity.js';
import { checkShape } from '../../shared/shapes.js';
import { nameBasedId } from '../models/sha256.js';
import { embeddedSchema, knownKeys, object, optional, required, string, type JsonObject } from '../validate.js';
import { SIGNED_IN_KEY } from '../../storage/storage.js';
import { clock, publish } from './common.js';

/**
 * The configured local user's id: as configured, else the one an older version kept, else one
 * derived from the database's identity (a wiped database has another user). Reading it writes
 * nothing, so that a refused request changes nothing.
 */
export async function configuredId(service: ServiceContext): Promise<string> {
  return (
    service.user?.id ?? (await service.storage.getMeta<string>('userId')) ?? nameBasedId(`user of ${await service.storage.identity()}`)
  );
}

export const readIdentity = async (service: ServiceContext) =>
  (await service.storage.getMeta<IdentityState>(IDENTITY_KEY)) ?? emptyIdentity();

/** The id of the current user: the one selected or authenticated last, else the configured one. */
export const currentId = async (service: ServiceContext, state?: IdentityState) =>
  (state ?? (await readIdentity(service))).current ?? (await configuredId(service));

/**
 * Signed in: as configured (a profile unless the service is configured without a user) until
 * `POST /os/sign_in`, `POST /os/sign_out` or an operation below chose, which is kept across restarts.
 */
export async function isSignedIn(service: ServiceContext): Promise<boolean> {
  const signedIn = await service.storage.getMeta<boolean>(SIGNED_IN_KEY);
  return signedIn === true || (signedIn === undefined && service.user !== null);
}

/** Every user this store knows: the configured one first, then those selected in, in order. */
async function knownIds(service: ServiceContext, state: IdentityState): Promise<string[]> {
  const configured = await configuredId(service);
  return [configured, ...Object.keys(state.users).filter((id) => id !== configured)];
}

/** The UserProfile of a user this store knows, or undefined. */
export async function profile(service: ServiceContext, id: string, state?: IdentityState): Promise<JsonObject | undefined> {
  const identity = state ?? (await readIdentity(service));
  const configured = await configuredId(service);
  if (id !== configured && !identity.users[id]) return undefined;
  return profileOf(service.user, configured, id, identity.users[id]);
}

/** The current user's profile while signed in, else undefined (GET /user, the user socket, connect). */
export async function localUser({ service }: OperationContext): Promise<JsonObject | undefined> {
  if (!(await isSignedIn(service))) return undefined;
  const state = await readIdentity(service);
  return profile(service, await currentId(service, state), state);
}

/** The current user's profile; 401 while nobody is signed in. */
export async function signedInUser(context: OperationContext): Promise<JsonObject> {
  const user = await localUser(context);
  if (!user) throw new HttpError(401, 'No user is signed in: sign in first (POST /os/sign_in, or the PKCE flow).');
  return user;
}

/**
 * Changes the identity in one transaction (logged as a `user` change, so the user socket sends
 * the profile again); `edit` may throw an HttpError, and then nothing is written.
 */
export async function editIdentity(
  context: OperationContext,
  edit: (state: IdentityState, now: string) => IdentityState,
): Promise<IdentityState> {
  const now = clock(context).now().toISOString();
  const { value, changes } = await context.service.storage.updateLoggedMeta<IdentityState>(
    IDENTITY_KEY,
    (kept) => edit(kept ?? emptyIdentity(), now),
    'user',
  );
  publish(context, changes);
  return value;
}

/** Changes the authorization server's grants in one transaction (expired ones dropped); not announced. */
export async function editAuthorization<T>(
  context: OperationContext,
  edit: (state: AuthorizationState, now: number) => { state: AuthorizationState; result: T },
): Promise<T> {
  const now = clock(context).now().getTime();
  let result: T;
  await context.service.storage.updateMeta<AuthorizationState>(AUTHORIZATION_KEY, (kept) => {
    const made = edit(live(kept ?? emptyAuthorization(), now), now);
    result = made.result;
    return made.state;
  });
  return result!;
}

/** The authorization server's live grants, read (nothing written). */
export async function readAuthorization(context: OperationContext): Promise<AuthorizationState> {
  const kept = await context.service.storage.getMeta<AuthorizationState>(AUTHORIZATION_KEY);
  return live(kept ?? emptyAuthorization(), clock(context).now().getTime());
}

/** The record of a user to change (made from nothing the first time), with `updated` set. */
const touched = (state: IdentityState, id: string, now: string): UserRecord => ({ id, created: now, ...state.users[id], updated: now });

/** Signs the current user in or out (kept across restarts; the user socket follows). */
export async function setSignedIn(context: OperationContext, signedIn: boolean) {
  publish(context, await context.service.storage.setSignedIn(signedIn));
}

/** Makes `id` the current user and signs it in. */
export async function signIn(context: OperationContext, id: string, edit?: (state: IdentityState, now: string) => IdentityState) {
  await editIdentity(context, (state, now) => ({ ...(edit ? edit(state, now) : state), current: id }));
  await setSignedIn(context, true);
}

/** The user signs in, having authenticated through `connection` (kept among its providers). */
export const signInThrough = (context: OperationContext, user: string, connection: string | undefined) =>
  signIn(context, user, (state: IdentityState, now: string) => {
    if (!connection) return state;
    const record = { id: user, created: now, ...state.users[user], updated: now };
    const providers = record.providers ?? [];
    const kept = providers.find((p) => p.type === connection);
    return {
      ...state,
      users: {
        ...state.users,
        [user]: {
          ...record,
          providers: kept
            ? providers.map((p) => (p === kept ? { ...p, updated: now } : p))
            : [...providers, { type: connection, created: now, updated: now }],
        },
      },
    };
  });

async function body(context: OperationContext, model: string, example: string): Promise<JsonObject> {
  const sent = await readJson(context.request, context.service.maxBodyBytes);
  if (sent === undefined) throw badRequest(`The request body is required: send a ${model} (${example}).`);
  return object(sent, model.charAt(0).toLowerCase() + model.slice(1));
}

/** A UserProfile body, checked strictly against the SDK's model; its user must be one this store knows. */
async function userProfileBody(context: OperationContext): Promise<{ sent: JsonObject; id: string }> {
  const sent = await body(context, 'UserProfile', '{"id":"…","aesthetics":{"theme":{"dark":false},"font":{"size":1}}}');
  const problem = checkShape('UserProfile', sent, 'userProfile');
  if (problem) throw badRequest(`${problem}.`);
  const id = sent.id as string;
  if (!(await profile(context.service, id))) throw notFound(`No user ${id} is known here (GET /users lists them).`);
  return { sent, id };
}

/** The vanity name `vanity` for user `id`: a DNS label, not another user's; throws the 400 or 409 otherwise. */
function checkVanity(state: IdentityState, id: string, vanity: string, path: string) {
  if (!VANITY.test(vanity)) {
    throw badRequest(
      `${path} must be 3 to 63 lowercase letters, digits and inner hyphens (it names ${vanity}.pieces.cloud); got ${JSON.stringify(vanity).slice(0, 80)}.`,
    );
  }
  const holder = Object.values(state.users).find((user) => user.id !== id && user.vanityname === vanity);
  if (holder) throw new HttpError(409, `The vanity name ${vanity} is taken by user ${holder.id}.`);
}

export async function userSnapshot(context: OperationContext) {
  const user = await localUser(context);
  return reply(user ? { user } : {});
}

/**
 * updateUser: a UserProfile of a user this store knows; its name, username, email, picture,
 * aesthetics and vanity name replace the kept ones (the vanity name as userUpdateVanity checks it).
 * What the service keeps itself (created, updated, allocation, providers, descope) is not taken
 * from the body: a profile read and sent back is accepted.
 */
export async function updateUser(context: OperationContext) {
  const { sent, id } = await userProfileBody(context);
  const state = await editIdentity(context, (kept, now) => {
    if (typeof sent.vanityname === 'string') checkVanity(kept, id, sent.vanityname, 'userProfile.vanityname');
    const aesthetics = sent.aesthetics as { theme: { dark: boolean }; font: { size: number } };
    const text = (key: 'name' | 'username' | 'email' | 'picture' | 'vanityname') =>
      typeof sent[key] === 'string' ? { [key]: sent[key] } : {};
    const record: UserRecord = {
      ...touched(kept, id, now),
      ...text('name'),
      ...text('username'),
      ...text('email'),
      ...text('picture'),
      ...text('vanityname'),
      aesthetics: { dark: aesthetics.theme.dark, fontSize: aesthetics.font.size },
    };
    return { ...kept, users: { ...kept.users, [id]: record } };
  });
  return reply((await profile(context.service, id, state))!);
}

/** userUpdateVanity: the profile's `vanityname` (required) becomes the user's: a DNS label no other user has (else 400 or 409). */
export async function userUpdateVanity(context: OperationContext) {
  const { sent, id } = await userProfileBody(context);
  const vanity = required(sent, 'vanityname', 'userProfile', string);
  const state = await editIdentity(context, (kept, now) => {
    checkVanity(kept, id, vanity, 'userProfile.vanityname');
    return { ...kept, users: { ...kept.users, [id]: { ...touched(kept, id, now), vanityname: vanity } } };
  });
  return reply((await profile(context.service, id, state))!);
}

/**
 * selectUser: an Auth0User naming the user to make current (by `user_id`, else by `email`); one
 * this store does not know yet is added from the Auth0User's name, email, username or nickname
 * and picture (so that a sign-in screen can switch between accounts). It is signed in.
 */
export async function selectUser(context: OperationContext) {
  const path = 'auth0User';
  const sent = await body(context, 'Auth0User', '{"email":"ada@example.test","name":"Ada"}');
  const fields = ['name', 'picture', 'email', 'created_at', 'email_verified', 'family_name', 'given_name', 'identities', 'nickname'];
  const more = [
    'updated_at',
    'username',
    'user_metadata',
    'locale',
    'user_id',
    'last_ip',
    'last_login',
    'logins_count',
    'blocked_for',
    'guardian_authenticators',
  ];
  knownKeys(sent, [...fields, ...more], path, 'Auth0User');
  const userId = optional(sent, 'user_id', path, string);
  const email = optional(sent, 'email', path, string);
  for (const key of ['name', 'picture', 'nickname', 'username']) optional(sent, key, path, string);
  if (userId === undefined && email === undefined)
    throw badRequest(`${path}.user_id or ${path}.email is required: it names the user to select.`);
  const state = await readIdentity(context.service);
  const ids = await knownIds(context.service, state);
  const profiles = await Promise.all(ids.map((id) => profile(context.service, id, state)));
  const found = profiles.find((p) => (userId !== undefined ? p?.id === userId : p?.email === email));
  const id = (found?.id as string | undefined) ?? userId ?? context.service.clock.newId();
  await signIn(context, id, (kept, now) => {
    if (found) return kept;
    const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
    const record: UserRecord = {
      id,
      created: now,
      updated: now,
      ...(email === undefined ? {} : { email }),
      ...(text(sent.name) === undefined ? {} : { name: text(sent.name) }),
      ...((text(sent.username) ?? text(sent.nickname)) === undefined ? {} : { username: text(sent.username) ?? text(sent.nickname) }),
      ...(text(sent.picture) === undefined ? {} : { picture: text(sent.picture) }),
    };
    return { ...kept, users: { ...kept.users, [id]: record } };
  });
  return reply((await profile(context.service, id))!);
}

/** refreshUser: the current user's profile as kept (401 while nobody is signed in). */
export async function refreshUser(context: OperationContext) {
  return reply(await signedInUser(context));
}

/** userProviders: the current user's profile with the providers it signed in through (`providers`); `{}` signed out. */
export async function userProviders(context: OperationContext) {
  const user = await localUser(context);
  return reply(user ? { user } : {});
}

/**
 * userAccessToken: an access token of the current user (text), the newest one still alive the
 * local authorization server issued it, else one issued now for this service's own client.
 */
export async function userAccessToken(context: OperationContext) {
  const user = (await signedInUser(context)).id as string;
  const token = await editAuthorization(context, (state, now) => {
    const newest = Object.entries(state.tokens)
      .filter(([, grant]) => grant.user === user)
      .sort(([, a], [, b]) => b.issued - a.issued)[0];
    if (newest) return { state, result: newest[0] };
    const issued = `${context.service.clock.newId()}.${context.service.clock.newId()}`;
    const grant = { user, client: 'pieces-os-worker', scope: ['openid', 'profile', 'email'], audience: context.url.origin, issued: now };
    return { state: { ...state, tokens: { ...state.tokens, [issued]: grant } }, result: issued };
  });
  return reply(token, { type: 'text' });
}

/**
 * userBetaStatus: a UserBetaStatus naming a user this store knows; with `descope.vision` (an
 * AnonymousTemporalRange) the user's vision beta becomes that range (its profile's
 * `descope.beta`); without, it is read. Answers the user's status.
 */
export async function userBetaStatus(context: OperationContext) {
  const path = 'userBetaStatus';
  const sent = await body(context, 'UserBetaStatus', '{"user":"…","descope":{"vision":{"from":{"value":"2026-01-01T00:00:00Z"}}}}');
  knownKeys(sent, ['schema', 'descope', 'user'], path, 'UserBetaStatus');
  optional(sent, 'schema', path, embeddedSchema);
  const id = required(sent, 'user', path, string);
  const descope = optional(sent, 'descope', path, object);
  if (descope) {
    knownKeys(descope, ['schema', 'vision'], `${path}.descope`, 'Auth0UserBetaStatus');
    optional(descope, 'schema', `${path}.descope`, embeddedSchema);
  }
  const vision = descope?.vision ?? undefined;
  if (vision !== undefined) {
    const problem = checkShape('AnonymousTemporalRange', vision, `${path}.descope.vision`);
    if (problem) throw badRequest(`${problem}.`);
  }
  if (!(await profile(context.service, id))) throw notFound(`No user ${id} is known here (GET /users lists them).`);
  const state =
    vision === undefined
      ? await readIdentity(context.service)
      : await editIdentity(context, (kept, now) => ({
          ...kept,
          users: { ...kept.users, [id]: { ...touched(kept, id, now), beta: vision as JsonObject } },
        }));
  const beta = state.users[id]?.beta;
  return reply({ user: id, ...(beta ? { descope: { vision: beta } } : {}) });
}

/** Revokes every token of `user` and forgets its codes (it signed out, or was cleared). */
const revoke = (context: OperationContext, user: string) =>
  editAuthorization(context, (state) => ({
    state: {
      ...state,
      codes: Object.fromEntries(Object.entries(state.codes).filter(([, grant]) => grant.user !== user)),
      tokens: Object.fromEntries(Object.entries(state.tokens).filter(([, grant]) => grant.user !== user)),
    },
    result: undefined,
  }));

/**
 * clearUser: the current user is cleared: signed out, its tokens revoked, what it changed of its
 * profile (vanity name, providers, beta status, allocation) forgotten, and a user selected in
 * forgotten whole; the configured user becomes current again.
 */
export async function clearUser(context: OperationContext) {
  const id = await currentId(context.service);
  await revoke(context, id);
  await editIdentity(context, (kept) => {
    const { [id]: _cleared, ...users } = kept.users;
    return { users };
  });
  await setSignedIn(context, false);
  return reply();
}

/** usersSnapshot: the users signed in on this OS: the current user while signed in, else none. */
export async function usersSnapshot(context: OperationContext) {
  const user = await localUser(context);
  return reply({ iterable: user ? [user] : [] });
}

/** usersSpecificUserSnapshot: the profile of a user this store knows (404 for another id). */
export async function usersSpecificUserSnapshot(context: OperationContext) {
  const found = await profile(context.service, context.params.user!);
  if (!found) throw notFound(`No user ${context.params.user} is known here (GET /users lists them).`);
  return reply(found);
}

/**
 * usersDisconnectUser: signs a user this store knows out (its tokens revoked; signed out if it
 * is the current user); answers the users left signed in.
 */
export async function usersDisconnectUser(context: OperationContext) {
  const id = context.params.user!;
  if (!(await profile(context.service, id))) throw notFound(`No user ${id} is known here (GET /users lists them).`);
  await revoke(context, id);
  if (id === (await currentId(context.service)) && (await isSignedIn(context.service))) await setSignedIn(context, false);
  return usersSnapshot(context);
}

/**
 * authenticateFromOauthToken: an OAuthToken whose access token the local authorization server
 * issued and has not revoked; its user becomes current and is signed in. Another token is 401.
 */
export async function authenticateFromOauthToken(context: OperationContext) {
  const path = 'oAuthToken';
  const sent = await body(context, 'OAuthToken', '{"access_token":"…","token_type":"Bearer","expires_in":86400}');
  knownKeys(sent, ['schema', 'access_token', 'token_type', 'expires_in', 'scope', 'refresh_token', 'id_token'], path, 'OAuthToken');
  optional(sent, 'schema', path, embeddedSchema);
  const token = required(sent, 'access_token', path, string);
  required(sent, 'token_type', path, (v, p) => {
    if (v !== 'Bearer') throw badRequest(`${p} must be Bearer; got ${JSON.stringify(v)}.`);
    return v;
  });
  required(sent, 'expires_in', path, (v, p) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw badRequest(`${p} must be a number.`);
    return v;
  });
  for (const key of ['scope', 'refresh_token', 'id_token']) optional(sent, key, path, string);
  const grant = (await readAuthorization(context)).tokens[token];
  if (!grant)
    throw new HttpError(401, 'The access token is not one this service issued, or it expired or was revoked.', {
      'WWW-Authenticate': 'Bearer error="invalid_token"',
    });
  await signInThrough(context, grant.user, grant.connection);
  return reply((await profile(context.service, grant.user))!);
}
