/**
 * Writes src/core/enums.ts: the enumerations of the Pieces OS API the service validates and
 * answers with, read from the SDK's own models (@pieces.app/pieces-os-client), so that the
 * worker bundle carries the values without carrying the SDK.
 *
 *   node scripts/enums.mjs
 *
 * ENUMS lists the enumerations the service uses (SDK_NAME where the SDK names one otherwise),
 * TYPES the union types it names. The file is left as written here (biome.json excludes it).
 */
import { createRequire } from 'node:module';
import { writeGenerated } from './generated.mjs';

const require = createRequire(import.meta.url);
const sdk = require('@pieces.app/pieces-os-client');
const { version } = require('@pieces.app/pieces-os-client/package.json');

const ENUMS = [
  'ApplicationNameEnum',
  'PlatformEnum',
  'PrivacyEnum',
  'CapabilitiesEnum',
  'MechanismEnum',
  'ConversationTypeEnum',
  'MessageRoleEnum',
  'MessageSentimentEnum',
  'AnnotationTypeEnum',
  'AnchorTypeEnum',
  'ModelTypeEnum',
  'ModelUsageEnum',
  'ModelFoundationEnum',
  'ExternalMLProviderEnum',
  'ModelDownloadProgressStatusEnum',
  'OSAppletEnum',
  'AllocationStatusEnum',
  'ClassificationSpecificEnum',
  'ClassificationGenericEnum',
  'ClassificationRenderingEnum',
  'RoleEnum',
  'TagCategoryEnum',
  'SeedTypeEnum',
];
/** Where the SDK names one differently. */
const SDK_NAME = {
  MessageRoleEnum: 'QGPTConversationMessageRoleEnum',
  MessageSentimentEnum: 'ConversationMessageSentimentEnum',
  RoleEnum: 'Role',
};
/** The union types the service names. */
const TYPES = [
  'ApplicationName',
  'ModelFoundation',
  'ExternalMLProvider',
  'ModelDownloadProgressStatus',
  'Platform',
  'Privacy',
  'ConversationType',
  'MessageRole',
];

/** `items` as lines of at most `width` characters, each item quoted. */
function wrap(items, width, indent) {
  const lines = [];
  let line = '';
  for (const item of items.map((v) => `'${v}',`)) {
    if (line && indent.length + line.length + 1 + item.length > width) {
      lines.push(indent + line);
      line = item;
    } else line = line ? `${line} ${item}` : item;
  }
  if (line) lines.push(indent + line);
  return lines;
}

let out = `/**
 * Enumerations of the Pieces OS API, as the SDK (${version}) defines them: written by
 * scripts/enums.mjs from the SDK's models. Do not edit.
 * Kept here, not imported, so that the worker bundle does not carry the SDK.
 */
`;
for (const name of ENUMS) {
  const values = Object.values(sdk[SDK_NAME[name] ?? name] ?? {});
  if (!values.length) throw new Error(`The SDK has no enumeration ${name}.`);
  const one = `export const ${name} = [${values.map((v) => `'${v}'`).join(', ')}] as const;`;
  out += one.length <= 100 ? `${one}\n` : `export const ${name} = [\n${wrap(values, 100, '  ').join('\n')}\n] as const;\n`;
}
out += `\n${TYPES.map((type) => `export type ${type} = (typeof ${type}Enum)[number];`).join('\n')}\n`;
writeGenerated(new URL('../src/core/enums.ts', import.meta.url), out, 'scripts/enums.mjs');
