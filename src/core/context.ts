/** What every operation handler receives. */
import type { Change, Storage } from '../storage/storage.js';
import type { Copilot } from './copilot/copilot.js';
import type { UserConfig } from './models/user.js';
import type { Clock } from './clock.js';

export interface ServiceContext {
  storage: Storage;
  /** The user agent of the browser the service runs in. */
  userAgent: string;
  maxBodyBytes: number;
  /** Where its times and ids come from. */
  clock: Clock;
  /** Called after each committed change, in commit order. */
  notify(change: Change): void;
  /** The copilot: relevance corpus, model adapter, answers in progress. */
  copilot: Copilot;
  /** The local user profile's settings; null: no user. */
  user: UserConfig | null;
}

export interface OperationContext {
  request: Request;
  url: URL;
  /** Path parameters, decoded. */
  params: Record<string, string>;
  service: ServiceContext;
}

export type OperationHandler = (context: OperationContext) => Promise<Response>;
