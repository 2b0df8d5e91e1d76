/**
 * One announcement channel per page, shared by every open stream socket: a
 * change announcement wakes the sockets of its collection; a `database`
 * notice makes every socket check at once; anything else is ignored.
 */
import type { Change } from '../storage/storage.js';
import { readAnnouncement } from '../core/stream-wire.js';

/** What the shim needs of a BroadcastChannel: its messages, and closing it. */
export interface AnnouncementChannel {
  onmessage: ((event: { data: unknown }) => void) | null;
  close(): void;
}

export interface AnnouncedSocket {
  announced(change: Change): void;
  check(): void;
}

export class Announcements {
  #channel: AnnouncementChannel | null = null;
  readonly #sockets = new Set<AnnouncedSocket>();

  constructor(private readonly open: () => AnnouncementChannel) {}

  add(socket: AnnouncedSocket): void {
    this.#sockets.add(socket);
    if (this.#channel) return;
    this.#channel = this.open();
    this.#channel.onmessage = (event) => {
      const announcement = readAnnouncement(event.data);
      if (!announcement) return;
      for (const s of this.#sockets) {
        if ('database' in announcement) s.check();
        else s.announced(announcement.change);
      }
    };
  }

  delete(socket: AnnouncedSocket): void {
    this.#sockets.delete(socket);
    if (this.#sockets.size === 0 && this.#channel) {
      this.#channel.close();
      this.#channel = null;
    }
  }
}
