/**
 * Assets sent by particular sources (MacOSApi: the macOS Services plugin; UltraSuiteApi:
 * UltraEdit's suite), each made into a Seed and stored as assetsCreateNewAsset stores one; and
 * local notifications (NotificationsApi), shown through the host's Notification API where it
 * has one.
 */
import type { OperationContext } from '../context.js';
import { ClassificationSpecificEnum } from '../enums.js';
import { badRequest, HttpError, readJson, reply } from '../http.js';
import { parseApplication } from '../models/application.js';
import { assetWire } from '../models/asset.js';
import { embeddedSchema, knownKeys, number, object, oneOf, optional, required, string, type JsonObject } from '../validate.js';
import { transferables } from './common.js';
import { createAssetFromSeed } from './assets.js';
import { serviceApplication } from './qgpt.js';

async function bodyOf(context: OperationContext, model: string, example: string): Promise<JsonObject> {
  const body = await readJson(context.request, context.service.maxBodyBytes);
  if (body === undefined) throw badRequest(`The request body is required: send a ${model} (${example}).`);
  return object(body, model[0]!.toLowerCase() + model.slice(1));
}

/**
 * assetsCreateNewAssetFromMacos: a SeededMacOSAsset (the text the user chose in a macOS
 * Service, and the application it came from, else this service's own) stored as an asset.
 */
export async function assetsCreateNewAssetFromMacos(context: OperationContext) {
  const withText = transferables(context.url);
  const path = 'seededMacOSAsset';
  const body = await bodyOf(context, 'SeededMacOSAsset', '{"value":"const a = 1;"}');
  knownKeys(body, ['schema', 'application', 'value'], path, 'SeededMacOSAsset');
  optional(body, 'schema', path, embeddedSchema);
  const application = optional(body, 'application', path, parseApplication) ?? (await serviceApplication(context.service));
  const value = required(body, 'value', path, string);
  const asset = await createAssetFromSeed(context, {
    type: 'SEEDED_ASSET',
    asset: { application, format: { fragment: { string: { raw: value } } } },
  });
  return reply(assetWire(asset, withText));
}

/**
 * assetsCreateUltraSuiteAsset: a SeededUltraSuiteAsset (a SeededFormat, with a name, an
 * extension that says its language, a description) stored as an asset of this service's
 * application, the description as its DESCRIPTION annotation.
 */
export async function assetsCreateUltraSuiteAsset(context: OperationContext) {
  const withText = transferables(context.url);
  const path = 'seededUltraSuiteAsset';
  const body = await bodyOf(context, 'SeededUltraSuiteAsset', '{"format":{"fragment":{"string":{"raw":"…"}}},"ext":"ts"}');
  knownKeys(body, ['schema', 'name', 'ext', 'format', 'description'], path, 'SeededUltraSuiteAsset');
  optional(body, 'schema', path, embeddedSchema);
  const name = optional(body, 'name', path, string);
  const ext = optional(body, 'ext', path, (v, p) => oneOf(v, ClassificationSpecificEnum, p));
  const description = optional(body, 'description', path, string);
  const format = required(body, 'format', path, object);
  const classification = ext
    ? { ...(typeof format.classification === 'object' ? (format.classification as JsonObject) : {}), specific: ext }
    : undefined;
  const asset = await createAssetFromSeed(context, {
    type: 'SEEDED_ASSET',
    asset: {
      application: await serviceApplication(context.service),
      format: { ...format, ...(classification ? { classification } : {}) },
      metadata: {
        ...(name ? { name } : {}),
        ...(description ? { annotations: [{ type: 'DESCRIPTION', text: description }] } : {}),
      },
    },
  });
  return reply(assetWire(asset, withText));
}

/** The Notification API of the host, where it has one: a service worker's registration, or a page's constructor. */
interface Notifier {
  permission: string;
  show(title: string, options: { body?: string; tag: string; data?: string }): Promise<void>;
}

function hostNotifier(): Notifier | undefined {
  const scope = globalThis as unknown as {
    Notification?: { permission: string } & (new (title: string, options: object) => object);
    registration?: { showNotification?(title: string, options: object): Promise<void> };
  };
  const { Notification } = scope;
  if (!Notification) return undefined;
  const registration = scope.registration;
  if (registration?.showNotification) {
    return { permission: Notification.permission, show: (title, options) => registration.showNotification!(title, options) };
  }
  return {
    permission: Notification.permission,
    show: async (title, options) => {
      new Notification(title, options);
    },
  };
}

/**
 * sendLocalNotification: a Notification shown by the host's Notification API (its id as the
 * notification's tag: a later one of the same id replaces it), answered with its id. A host
 * without the API (Node, the loopback server) answers 501 naming why; where the user has not
 * allowed notifications for the origin, 403 saying how to.
 */
export async function sendLocalNotification(context: OperationContext) {
  const path = 'notification';
  const body = await bodyOf(context, 'Notification', '{"id":1,"title":"Saved","message":"Your snippet was saved."}');
  knownKeys(body, ['schema', 'id', 'title', 'message', 'payload'], path, 'Notification');
  optional(body, 'schema', path, embeddedSchema);
  const id = required(body, 'id', path, number);
  const title = optional(body, 'title', path, string);
  const message = optional(body, 'message', path, string);
  const payload = optional(body, 'payload', path, string);
  const notifier = hostNotifier();
  if (!notifier) {
    throw new HttpError(
      501,
      'POST /notifications/local/send is the Pieces OS operation NotificationsApi.sendLocalNotification, which this host cannot do: it has no Notification API (a Node program has no desktop notifications of its own; a page or service worker of a browser shows them).',
    );
  }
  if (notifier.permission !== 'granted') {
    throw new HttpError(
      403,
      `Notifications are not allowed for this origin (Notification.permission is "${notifier.permission}"): a page must ask the user with Notification.requestPermission(), on a click.`,
    );
  }
  await notifier.show(title ?? 'Pieces', { ...(message ? { body: message } : {}), tag: String(id), ...(payload ? { data: payload } : {}) });
  return reply({ id });
}
