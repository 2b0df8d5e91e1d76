/** Handlers of UserApi: the local profile. */
import type { OperationContext } from '../context.js';
import { json } from '../http.js';
import { userProfile } from '../models/user.js';

/** The configured profile, or undefined when the service is configured without a user. */
export async function localUser({ service }: OperationContext) {
  if (service.user === null) return undefined;
  return userProfile(service.user, await service.storage.ensureMeta('userId', service.clock.newId));
}

export async function userSnapshot(context: OperationContext) {
  const user = await localUser(context);
  return json(user ? { user } : {});
}
