/** Handlers of UserApi: the local profile, signed in or out. */
import type { OperationContext } from '../context.js';
import { reply } from '../http.js';
import { userProfile } from '../models/user.js';
import { SIGNED_IN_KEY } from '../../storage/storage.js';

/**
 * The local profile while the user is signed in, else undefined. Signed in: as configured
 * (a profile unless the service is configured without a user) until `POST /os/sign_in` or
 * `POST /os/sign_out` chose, which is kept across restarts.
 */
export async function localUser({ service }: OperationContext) {
  const signedIn = await service.storage.getMeta<boolean>(SIGNED_IN_KEY);
  if (signedIn === false || (signedIn === undefined && service.user === null)) return undefined;
  const id = (await service.storage.getMeta<string>('userId')) ?? (await service.storage.ensureMeta('userId', service.clock.newId));
  return userProfile(service.user ?? {}, id);
}

export async function userSnapshot(context: OperationContext) {
  const user = await localUser(context);
  return reply(user ? { user } : {});
}
