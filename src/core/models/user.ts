/** The local user profile that GET /user answers (clients refuse to start without one). */
import type { JsonObject } from '../validate.js';

export interface UserConfig {
  /** Stable id; default one generated on first start and kept in the database. */
  id?: string;
  username?: string;
  name?: string;
  email?: string;
  /** Dark theme; default false. */
  dark?: boolean;
  /** Font scale; default 1. */
  fontSize?: number;
}

export function userProfile(config: UserConfig, storedId: string): JsonObject {
  return {
    id: config.id ?? storedId,
    username: config.username ?? 'local',
    name: config.name ?? 'Local user',
    ...(config.email ? { email: config.email } : {}),
    aesthetics: { theme: { dark: config.dark ?? false }, font: { size: config.fontSize ?? 1 } },
  };
}
