/**
 * The local identity: the users this store knows (the configured local user, and those a client
 * selected in), the one that is current, what each has changed of its profile (name, vanity
 * name, aesthetics), the providers it signed in through, its beta status and its cloud
 * allocation; and the local authorization server's grants (PKCE codes bound to a challenge,
 * the access tokens issued for them). Kept in the `meta` store under IDENTITY_KEY (logged as a
 * `user` change: the user socket sends the profile again) and AUTHORIZATION_KEY (not announced).
 */
import type { JsonObject } from '../validate.js';
import { userProfile, type UserConfig } from './user.js';

/** A provider a user signed in through (an Auth0 connection: `github`, `google-oauth2`, …). */
export interface ProviderRecord {
  type: string;
  created: string;
  updated: string;
}

/** A user's cloud allocation: there is no cloud here, so it is never reached (DISCONNECTED). */
export interface AllocationRecord {
  project: string;
  region?: string;
  version?: string;
  updated: string;
}

/** What the store keeps of one user, over its configured profile (the configured user) or from the Auth0User that selected it in. */
export interface UserRecord {
  id: string;
  created: string;
  updated: string;
  name?: string;
  username?: string;
  email?: string;
  picture?: string;
  aesthetics?: { dark: boolean; fontSize: number };
  vanityname?: string;
  providers?: ProviderRecord[];
  /** The vision beta's range (UserBetaStatus.descope.vision), as sent. */
  beta?: JsonObject;
  allocation?: AllocationRecord;
}

export interface IdentityState {
  /** The users the store knows beyond the configured one, and the configured one once changed. */
  users: Record<string, UserRecord>;
  /** The current user; absent: the configured local user. */
  current?: string;
}

/** A code the local authorization server issued: bound to its challenge, client and redirect. */
export interface CodeGrant {
  user: string;
  client: string;
  challenge: string;
  redirectUri?: string;
  state?: string;
  scope: string[];
  audience: string;
  connection?: string;
  /** When it was issued (ms); it lives CODE_LIFETIME_MS. */
  issued: number;
}

/** An access token the local authorization server issued. */
export interface TokenGrant {
  user: string;
  client: string;
  scope: string[];
  audience: string;
  /** The provider the user authenticated through (the code's `connection`), kept among its providers when it signs in. */
  connection?: string;
  issued: number;
}

export interface AuthorizationState {
  /** The current PKCE flow's challenge (getChallenge), until clearPKCE. */
  challenge?: JsonObject;
  codes: Record<string, CodeGrant>;
  tokens: Record<string, TokenGrant>;
}

export { AUTHORIZATION_KEY, IDENTITY_KEY } from '../../storage/storage.js';

/** An authorization code lives 10 minutes (RFC 6749, section 4.1.2: "a maximum … of 10 minutes is RECOMMENDED"). */
export const CODE_LIFETIME_MS = 10 * 60 * 1000;
/** An access token lives a day (Auth0's default for an API), in seconds as OAuthToken.expires_in says it. */
export const TOKEN_LIFETIME_S = 24 * 60 * 60;

export const emptyIdentity = (): IdentityState => ({ users: {} });
export const emptyAuthorization = (): AuthorizationState => ({ codes: {}, tokens: {} });

/** The grants still alive at `now` (expired codes and tokens are dropped on each write). */
export function live(state: AuthorizationState, now: number): AuthorizationState {
  const keep = <T extends { issued: number }>(grants: Record<string, T>, lifetime: number) =>
    Object.fromEntries(Object.entries(grants).filter(([, grant]) => now - grant.issued < lifetime));
  return { ...state, codes: keep(state.codes, CODE_LIFETIME_MS), tokens: keep(state.tokens, TOKEN_LIFETIME_S * 1000) };
}

/** A vanity name is a DNS label of `<name>.pieces.cloud`: 3 to 63 lowercase letters, digits and inner hyphens. */
export const VANITY = /^[a-z0-9](?:[a-z0-9-]{1,61}[a-z0-9])$/;

/** The connections an authorization may name: ExternalProviderTypeEnum's values. */
export const CONNECTIONS = [
  'github',
  'google-oauth2',
  'bitbucket',
  'linkedin',
  'twitter',
  'facebook',
  'waad',
  'discord',
  'gitlab',
  'apple',
  'username_email',
  'slack',
] as const;

const none = { status: 'DISCONNECTED', url: '' };

/** The AllocationCloud of a user's allocation record: nothing is reachable here, every status DISCONNECTED, no URL. */
export function allocationCloud(user: string, record: AllocationRecord, vanity: boolean): JsonObject {
  return {
    id: user,
    user,
    urls: { base: none, id: none, ...(vanity ? { vanity: none } : {}) },
    status: { cloud: 'DISCONNECTED' },
    project: record.project,
    updated: { value: record.updated },
    ...(record.region === undefined ? {} : { region: record.region }),
    ...(record.version === undefined ? {} : { version: record.version }),
  };
}

/**
 * The UserProfile of a user: the configured profile (the configured user) or the record's own
 * fields, with what the record changed, its vanity name, providers, beta status and allocation.
 */
export function profileOf(config: UserConfig | null, configuredId: string, id: string, record: UserRecord | undefined): JsonObject {
  const base: JsonObject =
    id === configuredId ? userProfile(config ?? {}, configuredId) : { id, aesthetics: { theme: { dark: false }, font: { size: 1 } } };
  if (!record) return base;
  const aesthetics = record.aesthetics
    ? { theme: { dark: record.aesthetics.dark }, font: { size: record.aesthetics.fontSize } }
    : (base.aesthetics as JsonObject);
  return {
    ...base,
    ...(record.name === undefined ? {} : { name: record.name }),
    ...(record.username === undefined ? {} : { username: record.username }),
    ...(record.email === undefined ? {} : { email: record.email }),
    ...(record.picture === undefined ? {} : { picture: record.picture }),
    aesthetics,
    created: { value: record.created },
    updated: { value: record.updated },
    ...(record.vanityname === undefined ? {} : { vanityname: record.vanityname }),
    ...(record.allocation ? { allocation: allocationCloud(id, record.allocation, record.vanityname !== undefined) } : {}),
    ...(record.providers?.length
      ? {
          providers: {
            iterable: record.providers.map((provider) => ({
              type: provider.type,
              user_id: `${provider.type}|${id}`,
              created: { value: provider.created },
              updated: { value: provider.updated },
              connection: provider.type,
              isSocial: provider.type !== 'username_email',
            })),
          },
        }
      : {}),
    ...(record.beta ? { descope: { global_id: id, descope_id: id, beta: record.beta } } : {}),
  };
}

/** The Auth0User of a profile (what /userinfo answers for a token of that user). */
export function auth0User(profile: JsonObject, record: UserRecord | undefined): JsonObject {
  const text = (key: string) => (typeof profile[key] === 'string' ? { [key]: profile[key] } : {});
  return {
    user_id: profile.id as string,
    ...text('name'),
    ...text('email'),
    ...text('picture'),
    ...text('username'),
    ...(typeof profile.username === 'string' ? { nickname: profile.username } : {}),
    ...(record ? { created_at: record.created, updated_at: record.updated } : {}),
    ...(record?.providers?.length
      ? {
          identities: record.providers.map((p) => ({
            connection: p.type,
            provider: p.type,
            user_id: `${p.type}|${profile.id}`,
            isSocial: p.type !== 'username_email',
          })),
        }
      : {}),
  };
}
