/** Handlers of ConnectorApi: connect. */
import type { OperationContext } from '../context.js';
import { readJson, reply } from '../http.js';
import { applicationWire } from '../models/application.js';
import { CapabilitiesEnum, PlatformEnum, PrivacyEnum, ApplicationNameEnum } from '../enums.js';
import { boolean, object, oneOf, optional, required, string } from '../validate.js';
import { PIECES_OS_VERSION } from '../../shared/version.js';
import { localUser } from './user.js';
import { publish } from './common.js';
import { osId } from './os.js';

/**
 * Upserts the application a SeededConnectorConnection describes (the same
 * name, platform and version always get the same id) and answers the Context.
 */
export async function connect(context: OperationContext) {
  const { service } = context;
  const path = 'seededConnectorConnection';
  const body = object(await readJson(context.request, service.maxBodyBytes), path);
  const seeded = required(body, 'application', path, object);
  const at = `${path}.application`;
  const name = required(seeded, 'name', at, (v, p) => oneOf(v, ApplicationNameEnum, p));
  const version = required(seeded, 'version', at, string);
  const platform = required(seeded, 'platform', at, (v, p) => oneOf(v, PlatformEnum, p));
  const capabilities = optional(seeded, 'capabilities', at, (v, p) => oneOf(v, CapabilitiesEnum, p));
  const privacy = optional(seeded, 'privacy', at, (v, p) => oneOf(v, PrivacyEnum, p)) ?? 'OPEN';
  const automaticUnload = optional(seeded, 'automaticUnload', at, boolean);
  const id = await service.storage.ensureMeta(`application:${name}|${platform}|${version}`, service.clock.newId);
  const application = {
    id,
    name,
    version,
    platform,
    onboarded: true,
    privacy,
    ...(capabilities ? { capabilities } : {}),
    ...(automaticUnload === undefined ? {} : { automaticUnload }),
  };
  publish(context, await service.storage.putApplication(application));
  const [stored, os, user] = await Promise.all([service.storage.getApplication(id), osId(service), localUser(context)]);
  return reply({
    os,
    application: applicationWire(stored!.application, stored!.engagement),
    health: { os: { id: os, version: PIECES_OS_VERSION } },
    ...(user ? { user } : {}),
  });
}
