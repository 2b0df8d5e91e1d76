// @vitest-environment node
/**
 * The mirror's state machine (src/host/mirror/machine.ts): the status's state derived from the
 * phase, the transitions each event may make (and the ones it may not), blocked stored once and
 * left only when allowed, a pause resumed, and the status announced by the replayer only.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import type { MirrorStatus } from '../../../src/core/mirror-spec.js';
import type { ChangeChannel } from '../../../src/host/channel.js';
import { ANNOUNCE_MS, MirrorMachine } from '../../../src/host/mirror/machine.js';
import type { OutboxEntry } from '../../../src/storage/schema.js';

const BASE = 'http://localhost:39300';
let posted: unknown[];
let outbox: OutboxEntry[];
let machine: MirrorMachine;

const channel = { post: (message: unknown) => posted.push(message) } as unknown as ChangeChannel;
const entry = (seq: number): OutboxEntry =>
  ({
    seq,
    operation: 'conversationsCreateSpecificConversation',
    params: {},
    body: {},
    created: [],
    at: new Date(0).toISOString(),
    state: 'queued',
  }) as unknown as OutboxEntry;

beforeEach(() => {
  vi.useFakeTimers();
  posted = [];
  outbox = [];
  machine = new MirrorMachine({ outboxEntries: async () => outbox, idPairs: async () => [] }, channel, BASE);
  machine.lockTaken(() => true);
});
afterEach(() => {
  machine.close();
  vi.useRealTimers();
});

const seen = () => ({ phase: machine.phase, state: machine.state, lastError: machine.lastError });

it('derives the status from the phase: a probe of an upstream that was up keeps showing up (requests keep passing through)', () => {
  expect(seen()).toEqual({ phase: 'unknown', state: 'down', lastError: null });
  expect(machine.probeStarted()).toBe(true);
  expect(seen()).toEqual({ phase: 'probing', state: 'down', lastError: null });
  machine.reached(BASE);
  machine.drained();
  expect(seen()).toEqual({ phase: 'up', state: 'up', lastError: null });
  expect(machine.probeStarted()).toBe(true);
  expect(seen()).toEqual({ phase: 'probing', state: 'up', lastError: null });
  // One probe at a time.
  expect(machine.probeStarted()).toBe(false);
  machine.unreachable(new Error('refused'));
  expect(seen()).toEqual({ phase: 'down', state: 'down', lastError: 'refused' });
});

it('retries only while draining, and a drain ends up with the error cleared', () => {
  machine.retrying(new Error('503'));
  expect(seen()).toEqual({ phase: 'unknown', state: 'down', lastError: null });
  machine.draining();
  machine.retrying(new Error('503'));
  expect(seen()).toEqual({ phase: 'draining', state: 'draining', lastError: '503' });
  machine.drained();
  expect(seen()).toEqual({ phase: 'up', state: 'up', lastError: null });
});

it('stays blocked, whatever the work still in flight reports, until the page is allowed', () => {
  machine.draining();
  machine.blocked('denied');
  for (const event of [
    () => machine.retrying(new Error('503')),
    () => machine.unreachable(new Error('refused')),
    () => machine.draining(),
    () => machine.drained(),
  ]) {
    event();
    expect(seen()).toEqual({ phase: 'blocked', state: 'blocked', lastError: 'denied' });
  }
  expect(machine.probeStarted()).toBe(false);
  expect(machine.live).toBe(false);
  machine.allowed();
  expect(seen()).toEqual({ phase: 'down', state: 'down', lastError: null });
  // Allowed when not blocked: nothing changes.
  machine.drained();
  machine.allowed();
  expect(machine.phase).toBe('up');
});

it('a pause stops probes until a request resumes the phase before it', () => {
  machine.drained();
  machine.pause();
  expect(seen()).toEqual({ phase: 'paused', state: 'up', lastError: null });
  expect(machine.probeStarted()).toBe(false);
  machine.unreachable(new Error('refused'));
  expect(machine.phase).toBe('paused');
  expect(machine.resume()).toBe(true);
  expect(machine.phase).toBe('up');
  expect(machine.resume()).toBe(false);
  // Paused mid-probe: resumed to the state it showed (a probe then says more).
  machine.unreachable(new Error('refused'));
  machine.probeStarted();
  machine.pause();
  machine.resume();
  expect(seen()).toEqual({ phase: 'down', state: 'down', lastError: 'refused' });
});

it('closed is for good', () => {
  machine.close();
  for (const event of [
    () => machine.probeStarted(),
    () => machine.drained(),
    () => machine.blocked('denied'),
    () => machine.pause(),
    () => machine.unreachable('x'),
  ])
    event();
  expect(machine.phase).toBe('closed');
  expect(machine.resume()).toBe(false);
});

it('a host blocked here that does not replay tries nothing itself, and shows what the replayer sees', () => {
  const other = new MirrorMachine({ outboxEntries: async () => [], idPairs: async () => [] }, channel, null);
  other.blocked('denied');
  other.heard({ state: 'up', upstream: BASE, outbox: [], setAside: [], lastError: null });
  expect({ phase: other.phase, state: other.state, lastError: other.lastError, live: other.live }).toEqual({
    phase: 'blocked',
    state: 'up',
    lastError: null,
    live: false,
  });
  expect(other.probeStarted()).toBe(false);
  // The replayer's own refusal is shown, not taken: this host is not blocked by it.
  const third = new MirrorMachine({ outboxEntries: async () => [], idPairs: async () => [] }, channel, null);
  third.heard({ state: 'blocked', upstream: BASE, outbox: [], setAside: [], lastError: 'denied there' });
  expect({ phase: third.phase, state: third.state, lastError: third.lastError }).toEqual({
    phase: 'unknown',
    state: 'blocked',
    lastError: 'denied there',
  });
  third.heard({ state: 'up', upstream: BASE, outbox: [], setAside: [], lastError: null });
  expect({ phase: third.phase, state: third.state }).toEqual({ phase: 'up', state: 'up' });
  other.close();
  third.close();
});

it('a host that does not replay takes the state the replayer announces', () => {
  const other = new MirrorMachine({ outboxEntries: async () => [], idPairs: async () => [] }, channel, null);
  expect(other.known).toBe(false);
  other.heard({ state: 'draining', upstream: BASE, outbox: [], setAside: [], lastError: '503' });
  expect({ phase: other.phase, state: other.state, base: other.base, known: other.known, dirty: other.dirty }).toEqual({
    phase: 'draining',
    state: 'draining',
    base: BASE,
    known: true,
    dirty: true,
  });
  // It announces nothing itself.
  vi.advanceTimersByTime(ANNOUNCE_MS * 2);
  expect(posted).toEqual([]);
  other.close();
});

it('announces changes of the state and of the outbox, coalesced, with the status made of them', async () => {
  outbox = [entry(1), entry(2)];
  await machine.reload();
  machine.draining();
  machine.entryReplaced({ ...entry(1), state: 'sent' });
  vi.advanceTimersByTime(ANNOUNCE_MS);
  expect(posted).toHaveLength(1);
  const { status } = posted[0] as { status: MirrorStatus };
  expect(status).toMatchObject({ state: 'draining', upstream: BASE, lastError: null, setAside: [] });
  expect(status.outbox.map((e) => [e.seq, e.sent ?? false])).toEqual([
    [1, true],
    [2, false],
  ]);
  expect(machine.waiting()).toBe(true);
  machine.entriesRemoved([1, 2]);
  expect(machine.waiting()).toBe(false);
  // Nothing changed: nothing announced.
  vi.advanceTimersByTime(ANNOUNCE_MS);
  machine.draining();
  vi.advanceTimersByTime(ANNOUNCE_MS);
  expect(posted).toHaveLength(2);
});
