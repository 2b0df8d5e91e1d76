/**
 * How a host's committed changes reach stream sockets, and other tabs' read
 * caches: one channel interface, over a BroadcastChannel (the worker, tabs in
 * page mode: every context of the origin hears it) or in this process only
 * (Node hosts, a page where BroadcastChannel is refused).
 */
import { CHANGES_CHANNEL, type ChangeMessage, type WorkerMessage } from '../core/stream-wire.js';
import type { Change } from '../storage/storage.js';
import type { AnnouncementChannel } from '../stream/announcements.js';

export interface ChangeChannel {
  /** Sends to every listening end: the stream shims of this and other contexts (never back to this end). */
  post(message: ChangeMessage | WorkerMessage): void;
  /** A new listening end, for a stream shim in this process. */
  open(): AnnouncementChannel;
  /**
   * The BroadcastChannel the read caches of other connections to the same database hear
   * (their writes clear this one's cache, and this one's theirs); null where there is none.
   * It is the object `post` sends through, so that a clear always arrives before the change
   * that follows it.
   */
  readonly invalidation: BroadcastChannel | null;
  close(): void;
}

/** A channel over the origin's BroadcastChannel `pieces-os-worker:changes`; in this process only where the browser refuses one. */
export function broadcastChannel(name = CHANGES_CHANNEL): ChangeChannel {
  let channel: BroadcastChannel;
  try {
    channel = new BroadcastChannel(name);
  } catch {
    // Firefox with site data blocked refuses BroadcastChannel (the store is this tab's memory then anyway).
    return localChannel();
  }
  return {
    post: (message) => channel.postMessage(message),
    // Each end is its own object: a BroadcastChannel hears what other objects send, this one's `post` included.
    open: () => new BroadcastChannel(name) as unknown as AnnouncementChannel,
    invalidation: channel,
    close: () => channel.close(),
  };
}

/** A channel inside this process: what a BroadcastChannel does, for a service running beside its clients. */
export function localChannel(): ChangeChannel {
  const ends = new Set<AnnouncementChannel>();
  return {
    post(data) {
      // Delivered later, as a BroadcastChannel does.
      for (const end of ends) queueMicrotask(() => end.onmessage?.({ data }));
    },
    open() {
      const end: AnnouncementChannel = { onmessage: null, close: () => void ends.delete(end) };
      ends.add(end);
      return end;
    },
    invalidation: null,
    close: () => ends.clear(),
  };
}

/**
 * Announces changes on `channel`, one message per collection per task, once the task's
 * answers are sent: an announcement only
 * makes sockets fetch what came after their last change, so the last change of each
 * collection says as much as all of them, for a fraction of the messages (a create of 5,000
 * messages logs 5,001 changes).
 */
export function batchedAnnouncer(channel: ChangeChannel): (change: Change) => void {
  let pending: Map<string, Change> | null = null;
  return (change) => {
    if (!pending) {
      const batch = (pending = new Map());
      // After the turn: the answer to the write that made the change goes out first (its caller
      // waits for it; the sockets only learn that there is something to fetch).
      setTimeout(() => {
        pending = null;
        try {
          for (const last of batch.values()) channel.post({ type: 'change', change: last });
        } catch {
          // The host was closed meanwhile: nobody left to tell from here.
        }
      });
    }
    const known = pending.get(change.collection);
    if (!known || change.seq > known.seq) pending.set(change.collection, change);
  };
}
