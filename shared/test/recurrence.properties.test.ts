import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cursorAt, firstCursor, nextOccurrences } from '../src/domain/recurrence/occurrences.js';
import type { RecurrenceSpec } from '../src/domain/recurrence/spec.js';
import { specOf } from './recurrence-kit.js';

/**
 * Properties of nextOccurrences over generated series: any EventBridge expression of the kinds
 * below, in zones with changes of one hour, half an hour, two hours and at midnight, under any
 * daylight-saving rule, with any start, end, count and offset.
 *
 * FC_RUNS=<n> runs each property n times instead, for a longer search.
 */
const runs = (usual: number) => ({ numRuns: Number(process.env.FC_RUNS) || usual });

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** The 2026 changes of the zones below (New York, Berlin, Lord Howe, Santiago, Troll, Chatham), UTC. */
const CHANGES = [
  '2026-03-08T07:00:00Z',
  '2026-11-01T06:00:00Z',
  '2026-03-29T01:00:00Z',
  '2026-10-25T01:00:00Z',
  '2026-04-04T15:00:00Z',
  '2026-10-03T15:30:00Z',
  '2026-04-05T03:00:00Z',
  '2026-09-06T04:00:00Z',
  '2026-04-04T14:00:00Z',
  '2026-09-26T14:00:00Z',
];
const zone = fc.constantFrom(
  'UTC',
  'America/New_York',
  'Europe/Berlin',
  'Australia/Lord_Howe',
  'America/Santiago',
  'Antarctica/Troll',
  'Pacific/Chatham',
);
const minutes = fc.constantFrom('0', '30', '*/15', '1/20', '5-35/10', '0,45', '*');
const hours = fc.constantFrom('*', '0', '1', '2', '23', '1-3', '0/6', '2,14');
const days = fc.oneof(
  fc.constantFrom('*', 'L', 'LW', '15W', '1,15', '1/10', '29').map((dom) => `${dom} * ?`),
  fc.constantFrom('*', 'MON-FRI', '1', 'L', '6L', '3#2', 'SUN,SAT').map((dow) => `? * ${dow}`),
);
const cron = fc.tuple(minutes, hours, days).map(([minute, hour, day]) => `cron(${minute} ${hour} ${day} *)`);
const rate = fc
  .tuple(fc.integer({ min: 1, max: 120 }), fc.constantFrom('minute', 'hour', 'day'))
  .map(([n, unit]) => `rate(${n} ${unit}${n === 1 ? '' : 's'})`);

const series = fc
  .record({
    expression: fc.oneof(cron, rate),
    timezone: zone,
    start: fc.oneof(
      // Through 2026 and 2027, both changes of each zone included,
      fc.integer({ min: Date.parse('2026-01-01T00:00:00Z'), max: Date.parse('2027-12-31T00:00:00Z') }),
      // and as often within two days before one of the golden cases' changes.
      fc.constantFrom(...CHANGES.map((iso) => Date.parse(iso))).chain((change) => fc.integer({ min: change - 2 * DAY_MS, max: change })),
    ),
    span: fc.option(fc.integer({ min: 1, max: 90 * DAY_MS }), { nil: undefined }),
    count: fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }),
    offsetMs: fc.integer({ min: 0, max: 59_999 }),
    gap: fc.constantFrom('skip', 'shift'),
    overlap: fc.constantFrom('first', 'both'),
  })
  .map(({ expression, start, span, count, gap, overlap, ...rest }): RecurrenceSpec => {
    const spec = specOf(expression, new Date(start).toISOString(), { ...rest, dst: { gap, overlap } });
    return { ...spec, ...(span === undefined ? {} : { end: start + span }), ...(count === undefined ? {} : { count }) };
  });

describe('the occurrences of any series', () => {
  it('are strictly increasing, all after the cursor, from the start, before the end, at most n and at most count', () => {
    fc.assert(
      fc.property(series, fc.integer({ min: 0, max: 60 * DAY_MS }), fc.integer({ min: 1, max: 25 }), (spec, later, n) => {
        const whole = nextOccurrences(spec, firstCursor(spec), 40);
        const after = spec.start + later;
        const next = nextOccurrences(spec, { after, fired: 0 }, n);
        expect(next.length).toBeLessThanOrEqual(n);
        for (const [index, instant] of next.entries()) {
          expect(instant).toBeGreaterThan(after);
          expect(instant).toBeGreaterThanOrEqual(spec.start);
          if (spec.end !== undefined) expect(instant).toBeLessThan(spec.end);
          if (index > 0) expect(instant).toBeGreaterThan(next[index - 1] ?? Number.NaN);
        }
        if (spec.count !== undefined) expect(whole.length).toBeLessThanOrEqual(spec.count);
      }),
      runs(150),
    );
  });

  it('keep the offset on minute-precise instants, a minute apart at least for cron and a period apart for rate()', () => {
    fc.assert(
      fc.property(series, (spec) => {
        const instants = nextOccurrences(spec, firstCursor(spec), 30);
        for (const [index, instant] of instants.entries()) {
          expect((instant - spec.offsetMs) % MINUTE_MS).toBe(0);
          if (index === 0) continue;
          const gap = instant - (instants[index - 1] ?? Number.NaN);
          if (spec.expression.kind === 'rate') expect(gap).toBe(spec.expression.periodMs);
          else expect(gap).toBeGreaterThanOrEqual(MINUTE_MS);
        }
      }),
      runs(150),
    );
  });

  it('continue from any occurrence as the cursor says, and cursorAt counts the same', () => {
    fc.assert(
      fc.property(series, fc.nat(), (spec, pick) => {
        const whole = nextOccurrences(spec, firstCursor(spec), 12);
        if (whole.length === 0) return;
        const index = pick % whole.length;
        const at = whole[index] ?? Number.NaN;
        const cursor = { after: at, fired: index + 1 };
        expect(cursorAt(spec, at)).toEqual(cursor);
        expect(nextOccurrences(spec, cursor, whole.length - index - 1)).toEqual(whole.slice(index + 1));
      }),
      runs(100),
    );
  });
});
