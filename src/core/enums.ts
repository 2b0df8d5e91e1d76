/**
 * Enumerations of the Pieces OS API, as the SDK (4.1.0) defines them.
 * Kept here, not imported, so that the worker bundle does not carry the SDK.
 */

export const ApplicationNameEnum = [
  'UNKNOWN', 'SUBLIME', 'VS_CODE', 'JETBRAINS', 'FIREFOX_ADDON_MV2', 'FIREFOX_ADDON_MV3',
  'SAFARI_EXTENSION_MV2', 'SAFARI_EXTENSION_MV3', 'PIECES_FOR_DEVELOPERS',
  'PIECES_FOR_DEVELOPERS_CLI', 'OS_SERVER', 'GOOGLE_CHROME_EXTENSION_MV2',
  'GOOGLE_CHROME_EXTENSION_MV3', 'ULTRA_EDIT', 'ATOM_PACKAGE',
  'ADOBE_ILLUSTRATOR_PIECES_COLOR_SHARE', 'MICROSOFT_TEAMS', 'CHAT_GPT', 'OBSIDIAN',
  'JUPYTER_HUB', 'VISUAL_STUDIO', 'MICROSOFT_EDGE', 'BRAVE', 'GOOGLE_CHAT', 'SLACK',
  'AZURE_DATA_STUDIO', 'OPEN_SOURCE', 'R_STUDIO', 'VIM', 'NOTION', 'GITHUB_DESKTOP',
  'RAYCAST', 'REPLIT', 'ALFRED', 'FIGMA', 'SKETCH', 'ADOBE_ILLUSTRATOR',
  'NOTEPAD_PLUS_PLUS', 'EMBEETLE', 'ECLIPSE', 'X_CODE', 'NETBEANS', 'OPERA',
] as const;
export const PlatformEnum = ['UNKNOWN', 'WEB', 'MACOS', 'LINUX', 'WINDOWS', 'FUCHSIA', 'IOS', 'ANDROID'] as const;
export const PrivacyEnum = ['UNKNOWN', 'OPEN', 'CLOSED', 'ANONYMOUS'] as const;
export const CapabilitiesEnum = ['UNKNOWN', 'LOCAL', 'CLOUD', 'BLENDED'] as const;
export const MechanismEnum = [
  'UNKNOWN', 'MANUAL', 'RECOMMENDED', 'AUTOMATIC', 'INTERNAL', 'DELETED', 'EXTERNAL_AGENT',
] as const;
export const ConversationTypeEnum = ['UNKNOWN', 'COPILOT'] as const;
export const MessageRoleEnum = ['UNKNOWN', 'USER', 'SYSTEM', 'ASSISTANT'] as const;
export const MessageSentimentEnum = ['UNKNOWN', 'LIKE', 'DISLIKE', 'REPORT'] as const;

export const AnnotationTypeEnum = ['UNKNOWN', 'DESCRIPTION', 'COMMENT', 'DOCUMENTATION', 'SUMMARY', 'EXPLANATION', 'GIT_COMMIT'] as const;
export const AnchorTypeEnum = ['UNKNOWN', 'FILE', 'DIRECTORY'] as const;
export const ModelTypeEnum = ['UNKNOWN', 'BALANCED', 'SPEED', 'ACCURACY'] as const;

export type ApplicationName = (typeof ApplicationNameEnum)[number];
export type Platform = (typeof PlatformEnum)[number];
export type Privacy = (typeof PrivacyEnum)[number];
export type ConversationType = (typeof ConversationTypeEnum)[number];
export type MessageRole = (typeof MessageRoleEnum)[number];
