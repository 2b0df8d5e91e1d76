/** extract_temporal_range's rules: time phrases as UTC ranges relative to now. */
import { describe, expect, it } from 'vitest';
import { temporalRanges } from '../../../src/core/mcp/temporal.js';

// A Wednesday, 14:30 UTC.
const now = new Date('2025-02-12T14:30:00.000Z');
const ranges = (text: string) => temporalRanges(text, now);

describe('temporalRanges', () => {
  it('reads days, parts of days and spans back from now', () => {
    expect(ranges('what did I work on yesterday afternoon')).toEqual([
      { from: '2025-02-11T12:00:00.000Z', to: '2025-02-11T17:59:59.000Z' },
    ]);
    expect(ranges('in the past 3 hours')).toEqual([{ from: '2025-02-12T11:30:00.000Z', to: '2025-02-12T14:30:00.000Z' }]);
    expect(ranges('the last two days')).toEqual([{ from: '2025-02-10T14:30:00.000Z', to: '2025-02-12T14:30:00.000Z' }]);
    expect(ranges('last Tuesday morning')).toEqual([{ from: '2025-02-11T06:00:00.000Z', to: '2025-02-11T11:59:59.000Z' }]);
    expect(ranges('last Wednesday')).toEqual([{ from: '2025-02-05T00:00:00.000Z', to: '2025-02-05T23:59:59.000Z' }]);
    expect(ranges('on 2025-01-31')).toEqual([{ from: '2025-01-31T00:00:00.000Z', to: '2025-01-31T23:59:59.000Z' }]);
  });

  it('reads weeks, months and years as calendar spans (weeks from Monday)', () => {
    expect(ranges('last week')).toEqual([{ from: '2025-02-03T00:00:00.000Z', to: '2025-02-09T23:59:59.000Z' }]);
    expect(ranges('last month')).toEqual([{ from: '2025-01-01T00:00:00.000Z', to: '2025-01-31T23:59:59.000Z' }]);
    expect(ranges('this year')).toEqual([{ from: '2025-01-01T00:00:00.000Z', to: '2025-02-12T14:30:00.000Z' }]);
  });

  it('ends a range that reaches past now at now, gives each range once in the order of its phrase, and none without a phrase', () => {
    expect(ranges('this evening')).toEqual([]);
    expect(ranges('today, and yesterday, and today again')).toEqual([
      { from: '2025-02-12T00:00:00.000Z', to: '2025-02-12T14:30:00.000Z' },
      { from: '2025-02-11T00:00:00.000Z', to: '2025-02-11T23:59:59.000Z' },
    ]);
    expect(ranges('how does the parser work')).toEqual([]);
    expect(ranges('on 2025-02-30')).toEqual([]);
  });
});
