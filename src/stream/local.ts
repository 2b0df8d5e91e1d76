/**
 * Change announcements inside one process: what the worker's BroadcastChannel
 * does between a worker and its pages, for a service running beside its
 * clients (Node tests, the loopback server). One instance per service keeps
 * services isolated.
 */
import type { Change } from '../storage/storage.js';
import type { ChangeMessage } from './protocol.js';
import type { AnnouncementChannel } from './shim.js';

export class LocalAnnouncements {
  readonly #channels = new Set<AnnouncementChannel>();

  /** A channel on which every later announcement arrives (asynchronously, as a BroadcastChannel delivers). */
  open = (): AnnouncementChannel => {
    const channel: AnnouncementChannel = { onmessage: null, close: () => void this.#channels.delete(channel) };
    this.#channels.add(channel);
    return channel;
  };

  announce(change: Change): void {
    const data: ChangeMessage = { type: 'change', change };
    for (const channel of this.#channels) queueMicrotask(() => channel.onmessage?.({ data }));
  }
}
