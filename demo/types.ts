/** The records the demo reads, as the service sends them (only the fields it uses). */

export interface MessageValue {
  id: string;
  role: string;
  fragment?: { string?: { raw?: string } };
  [key: string]: unknown;
}

export interface Message {
  id: string;
  reference?: MessageValue;
}

export interface Conversation {
  id: string;
  name?: string;
  created: { value: string };
  updated: { value: string };
  messages: { iterable: Message[] };
}

export interface Engagement {
  interactions: number;
  keyboard: number;
  installations: number;
  updates: number;
  lastActivity?: { value: string };
}

export interface Application {
  id: string;
  name: string;
  version: string;
  platform: string;
  onboarded: boolean;
  privacy: string;
  engagement?: Engagement;
  [key: string]: unknown;
}

export interface Session {
  id: string;
  opened: { value: string };
  closed?: { value: string };
  engagement: Engagement;
}
