/**
 * Handlers of AllocationsApi and AllocationApi: a user's cloud allocation as a record of the
 * local identity. There is no cloud here, so an allocation is never reached: its status and
 * every URL's are DISCONNECTED, with no address; what it is (its project, region, version) is
 * kept, listed, shown on its user's profile (`allocation`) and sent on the user socket.
 * Creating and deleting an allocation is the cloud's own business (the SDK: "unimplemented
 * locally … ONLY used within the cloud"): src/core/handlers/host-cannot.ts answers them 501.
 */
import type { OperationContext } from '../context.js';
import { badRequest, notFound, readJson, reply } from '../http.js';
import { allocationCloud, type AllocationRecord, type IdentityState } from '../models/identity.js';
import { checkShape } from '../../shared/shapes.js';
import type { JsonObject } from '../validate.js';
import { editIdentity, localUser, readIdentity, signedInUser } from './user.js';

/** The AllocationCloud of a user's allocation, if it has one. */
const cloudOf = (state: IdentityState, user: string): JsonObject | undefined => {
  const record = state.users[user];
  return record?.allocation ? allocationCloud(user, record.allocation, record.vanityname !== undefined) : undefined;
};

/** An AllocationCloud body (required), checked strictly against the SDK's model. */
async function allocationBody(context: OperationContext): Promise<JsonObject> {
  const sent = await readJson(context.request, context.service.maxBodyBytes);
  if (sent === undefined) throw badRequest('The request body is required: send an AllocationCloud (as GET /allocations lists them).');
  return checkedAllocation(sent);
}

function checkedAllocation(sent: unknown): JsonObject {
  const problem = checkShape('AllocationCloud', sent, 'allocationCloud');
  if (problem) throw badRequest(`${problem}.`);
  return sent as JsonObject;
}

/** The allocation a body names (by `id`, its user's id), or a 404. */
async function named(context: OperationContext, sent: JsonObject): Promise<string> {
  const id = sent.id as string;
  if (!cloudOf(await readIdentity(context.service), id)) throw notFound(`No allocation ${id} is kept here (GET /allocations lists them).`);
  return id;
}

/**
 * allocationsConnectNewCloud: the signed-in user's allocation (a UserProfile body may name it; it
 * must be that user): kept from now on, and answered with no cloud to reach (DISCONNECTED).
 */
export async function allocationsConnectNewCloud(context: OperationContext) {
  const sent = await readJson(context.request, context.service.maxBodyBytes);
  const problem = sent === undefined ? undefined : checkShape('UserProfile', sent, 'userProfile');
  if (problem) throw badRequest(`${problem}.`);
  const user = (await signedInUser(context)).id as string;
  if (sent !== undefined && (sent as JsonObject).id !== user) throw badRequest(`userProfile.id must be the signed-in user's, ${user}.`);
  const state = await editIdentity(context, (kept, now) => {
    const record = { id: user, created: now, ...kept.users[user], updated: now };
    const allocation: AllocationRecord = { project: '', ...record.allocation, updated: now };
    return { ...kept, users: { ...kept.users, [user]: { ...record, allocation } } };
  });
  return reply(cloudOf(state, user)!);
}

/**
 * allocationsDisconnectCloud: the allocation an AllocationCloud body names (without a body: the
 * signed-in user's) is no longer kept; one that is not kept is nothing to disconnect. A text
 * answer, as the SDK reads it.
 */
export async function allocationsDisconnectCloud(context: OperationContext) {
  const sent = await readJson(context.request, context.service.maxBodyBytes);
  const id = (sent === undefined ? (await localUser(context))?.id : checkedAllocation(sent).id) as string | undefined;
  let kept = false;
  if (id !== undefined) {
    await editIdentity(context, (state) => {
      const record = state.users[id];
      if (!record?.allocation) return state;
      kept = true;
      const { allocation: _dropped, ...rest } = record;
      return { ...state, users: { ...state.users, [rest.id]: rest } };
    });
  }
  return reply(
    kept
      ? `The allocation of user ${id} is disconnected (there was no cloud to reach here).`
      : 'The local user has no cloud allocation: nothing to disconnect.',
    { type: 'text' },
  );
}

/** allocationsReconnectCloud: the allocation named is tried again: no cloud answers here, so it stays DISCONNECTED (its `updated` is now). */
export async function allocationsReconnectCloud(context: OperationContext) {
  const id = await named(context, await allocationBody(context));
  const state = await editIdentity(context, (kept, now) => {
    const record = kept.users[id]!;
    return { ...kept, users: { ...kept.users, [id]: { ...record, allocation: { ...record.allocation!, updated: now } } } };
  });
  return reply(cloudOf(state, id)!);
}

/** allocationsSnapshot: the allocations kept, of every user this store knows. */
export async function allocationsSnapshot({ service }: OperationContext) {
  const state = await readIdentity(service);
  return reply({ iterable: Object.keys(state.users).flatMap((user) => cloudOf(state, user) ?? []) });
}

/** allocationSnapshot: one allocation kept (its id is its user's), or 404. */
export async function allocationSnapshot(context: OperationContext) {
  const found = cloudOf(await readIdentity(context.service), context.params.allocation!);
  if (!found) throw notFound(`No allocation ${context.params.allocation} is kept here (GET /allocations lists them).`);
  return reply(found);
}

/**
 * allocationUpdate: an AllocationCloud of an allocation kept: its project, region and version
 * replace the kept ones. Its status and URLs cannot say it is reached: there is no cloud here
 * (anything but DISCONNECTED with no address is refused).
 */
export async function allocationUpdate(context: OperationContext) {
  const sent = await allocationBody(context);
  const id = await named(context, sent);
  if (sent.user !== id) throw badRequest(`allocationCloud.user must be ${id}, the user the allocation is of.`);
  const statuses = [sent.status, ...Object.values(sent.urls as JsonObject)] as Array<{ cloud?: string; status?: string; url?: string }>;
  if (statuses.some((s) => (s.cloud ?? s.status) !== 'DISCONNECTED' || (s.url ?? '') !== '')) {
    throw badRequest('allocationCloud.status and its urls must be DISCONNECTED with no url: there is no cloud here to reach.');
  }
  const state = await editIdentity(context, (kept, now) => {
    const record = kept.users[id]!;
    const allocation: AllocationRecord = {
      project: sent.project as string,
      updated: now,
      ...(typeof sent.region === 'string' ? { region: sent.region } : {}),
      ...(typeof sent.version === 'string' ? { version: sent.version } : {}),
    };
    return { ...kept, users: { ...kept.users, [id]: { ...record, allocation } } };
  });
  return reply(cloudOf(state, id)!);
}
