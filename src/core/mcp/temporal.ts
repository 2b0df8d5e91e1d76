/**
 * `extract_temporal_range` by rules: the time phrases of a text as UTC ranges, relative to now
 * (days in UTC). Phrases: today, yesterday, tonight, this/yesterday morning|afternoon|evening|night,
 * (last|past) N minutes|hours|days|weeks|months, the last|past minute|hour|day, this|last week|month|year,
 * (last|on) <weekday> [morning|afternoon|evening|night], and dates written YYYY-MM-DD. A range
 * reaching past now ends now; each range is given once, in the order its phrase comes.
 */
export interface TemporalRange {
  from: string;
  to: string;
}

const DAY = 86_400_000;
const UNIT_MS: Record<string, number> = { minute: 60_000, hour: 3_600_000, day: DAY, week: 7 * DAY };
const PARTS: Record<string, [number, number]> = { morning: [6, 12], afternoon: [12, 18], evening: [18, 24], night: [18, 24] };
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const NUMBERS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  twelve: 12,
};

const midnight = (time: number) => Math.floor(time / DAY) * DAY;

/** A day's span (or a part of it) from its midnight. */
const daySpan = (start: number, part?: string): [number, number] => {
  const [from, to] = part ? PARTS[part]! : [0, 24];
  return [start + from * 3_600_000, start + to * 3_600_000 - 1000];
};

export function temporalRanges(text: string, now: Date): TemporalRange[] {
  const t = now.getTime();
  const today = midnight(t);
  const lower = text.toLowerCase();
  const found: Array<{ at: number; span: [number, number] }> = [];
  const add = (at: number, span: [number, number]) => found.push({ at, span });
  const part = '(?:\\s+(morning|afternoon|evening|night))?';
  let m: RegExpExecArray | null;

  const each = (pattern: RegExp, make: (match: RegExpExecArray) => [number, number] | undefined) => {
    for (pattern.lastIndex = 0; (m = pattern.exec(lower)); ) {
      const span = make(m);
      if (span) add(m.index, span);
    }
  };

  each(new RegExp(`\\b(today|this)${part}\\b`, 'g'), (x) => (x[1] === 'this' && !x[2] ? undefined : daySpan(today, x[2])));
  each(/\btonight\b/g, () => daySpan(today, 'night'));
  each(new RegExp(`\\byesterday${part}\\b`, 'g'), (x) => daySpan(today - DAY, x[1]));
  each(
    /\b(?:last|past|previous)\s+(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|twelve)\s+(minute|hour|day|week|month)s?\b/g,
    (x) => {
      const n = NUMBERS[x[1]!] ?? Number(x[1]);
      if (x[2] === 'month') {
        const from = new Date(t);
        from.setUTCMonth(from.getUTCMonth() - n);
        return [from.getTime(), t];
      }
      return [t - n * UNIT_MS[x[2]!]!, t];
    },
  );
  each(/\b(?:the\s+)?(?:last|past)\s+(minute|hour)\b/g, (x) => [t - UNIT_MS[x[1]!]!, t]);
  each(/\b(this|last|past|previous)\s+(week|month|year)\b/g, (x) => {
    const date = new Date(today);
    let start: number;
    let next: (from: number) => number;
    if (x[2] === 'week') {
      start = today - ((date.getUTCDay() + 6) % 7) * DAY; // Monday
      next = (from) => from + 7 * DAY;
      if (x[1] !== 'this') start -= 7 * DAY;
    } else if (x[2] === 'month') {
      const month = date.getUTCMonth() - (x[1] === 'this' ? 0 : 1);
      start = Date.UTC(date.getUTCFullYear(), month, 1);
      next = (from) => Date.UTC(new Date(from).getUTCFullYear(), new Date(from).getUTCMonth() + 1, 1);
    } else {
      start = Date.UTC(date.getUTCFullYear() - (x[1] === 'this' ? 0 : 1), 0, 1);
      next = (from) => Date.UTC(new Date(from).getUTCFullYear() + 1, 0, 1);
    }
    return [start, next(start) - 1000];
  });
  each(new RegExp(`\\b(?:last|on|this\\s+past)\\s+(${WEEKDAYS.join('|')})${part}\\b`, 'g'), (x) => {
    const back = (new Date(today).getUTCDay() - WEEKDAYS.indexOf(x[1]!) + 7) % 7 || 7;
    return daySpan(today - back * DAY, x[2]);
  });
  each(/\b(\d{4})-(\d{2})-(\d{2})\b/g, (x) => {
    const start = Date.UTC(Number(x[1]), Number(x[2]) - 1, Number(x[3]));
    return Number.isNaN(start) || new Date(start).getUTCDate() !== Number(x[3]) ? undefined : daySpan(start);
  });

  const seen = new Set<string>();
  return found
    .sort((a, b) => a.at - b.at)
    .flatMap(({ span: [from, to] }) => {
      if (from > t) return [];
      const range = { from: new Date(from).toISOString(), to: new Date(Math.min(to, t)).toISOString() };
      const key = `${range.from}/${range.to}`;
      if (seen.has(key)) return [];
      seen.add(key);
      return [range];
    });
}
