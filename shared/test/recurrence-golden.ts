import type { DstRule } from '../src/domain/recurrence/spec.js';

/**
 * The golden daylight-saving cases: a daily cron at a local time its zone skips or repeats on
 * the day of each of its 2026 changes, under each rule, a cron every half hour through the
 * change, and rate() across it. The instants are worked out by hand from the tz database's
 * rules for each zone (the change's instant and the offsets either side), not by the code
 * under test; docs/design.md shows the same table.
 */
export interface GoldenCase {
  readonly zone: string;
  /** The change, as the tz database states it. */
  readonly change: string;
  readonly expression: string;
  /** The series' start (ISO, UTC); the occurrences are its first ones. */
  readonly start: string;
  readonly rule: keyof typeof RULES;
  readonly occurrences: readonly string[];
}

export const RULES = {
  skip: { gap: 'skip', overlap: 'first' },
  shift: { gap: 'shift', overlap: 'first' },
  first: { gap: 'skip', overlap: 'first' },
  both: { gap: 'skip', overlap: 'both' },
  /** rate(): elapsed time, whatever the rule. */
  elapsed: { gap: 'skip', overlap: 'first' },
} as const satisfies Record<string, DstRule>;

const NY_SPRING = '2026-03-08 02:00 EST (-05) → 03:00 EDT (-04), at 07:00Z';
const NY_FALL = '2026-11-01 02:00 EDT (-04) → 01:00 EST (-05), at 06:00Z';
const BERLIN_SPRING = '2026-03-29 02:00 CET (+01) → 03:00 CEST (+02), at 01:00Z';
const BERLIN_FALL = '2026-10-25 03:00 CEST (+02) → 02:00 CET (+01), at 01:00Z';
const LH_FALL = '2026-04-05 02:00 (+11) → 01:30 (+10:30), at 2026-04-04 15:00Z';
const LH_SPRING = '2026-10-04 02:00 (+10:30) → 02:30 (+11), at 2026-10-03 15:30Z';
const SANTIAGO_FALL = '2026-04-05 00:00 (-03) → 2026-04-04 23:00 (-04), at 03:00Z';
const SANTIAGO_SPRING = '2026-09-06 00:00 (-04) → 01:00 (-03), at 04:00Z';
const TROLL_SPRING = '2026-03-29 01:00 (+00) → 03:00 (+02), at 01:00Z';
const TROLL_FALL = '2026-10-25 03:00 (+02) → 01:00 (+00), at 01:00Z';

const NY = 'America/New_York';
const BERLIN = 'Europe/Berlin';
const LORD_HOWE = 'Australia/Lord_Howe';
const SANTIAGO = 'America/Santiago';
const TROLL = 'Antarctica/Troll';

export const GOLDEN_CASES: readonly GoldenCase[] = [
  // America/New_York: 02:30 does not exist on 8 March; 01:30 comes twice on 1 November.
  {
    zone: NY,
    change: NY_SPRING,
    expression: 'cron(30 2 * * ? *)',
    start: '2026-03-07T00:00:00Z',
    rule: 'skip',
    occurrences: ['2026-03-07T07:30:00.000Z', '2026-03-09T06:30:00.000Z', '2026-03-10T06:30:00.000Z'],
  },
  {
    zone: NY,
    change: NY_SPRING,
    expression: 'cron(30 2 * * ? *)',
    start: '2026-03-07T00:00:00Z',
    rule: 'shift',
    occurrences: ['2026-03-07T07:30:00.000Z', '2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z'],
  },
  {
    zone: NY,
    change: NY_SPRING,
    expression: 'cron(0/30 2 * * ? *)',
    start: '2026-03-08T00:00:00Z',
    rule: 'skip',
    occurrences: ['2026-03-09T06:00:00.000Z', '2026-03-09T06:30:00.000Z', '2026-03-10T06:00:00.000Z'],
  },
  {
    zone: NY,
    change: NY_SPRING,
    expression: 'cron(0/30 2 * * ? *)',
    start: '2026-03-08T00:00:00Z',
    rule: 'shift',
    occurrences: ['2026-03-08T07:00:00.000Z', '2026-03-09T06:00:00.000Z', '2026-03-09T06:30:00.000Z'],
  },
  {
    zone: NY,
    change: NY_SPRING,
    expression: 'rate(1 day)',
    start: '2026-03-07T14:00:00Z',
    rule: 'elapsed',
    occurrences: ['2026-03-07T14:00:00.000Z', '2026-03-08T14:00:00.000Z', '2026-03-09T14:00:00.000Z'],
  },
  {
    zone: NY,
    change: NY_FALL,
    expression: 'cron(30 1 * * ? *)',
    start: '2026-10-31T00:00:00Z',
    rule: 'first',
    occurrences: ['2026-10-31T05:30:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z'],
  },
  {
    zone: NY,
    change: NY_FALL,
    expression: 'cron(30 1 * * ? *)',
    start: '2026-10-31T00:00:00Z',
    rule: 'both',
    occurrences: ['2026-10-31T05:30:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-01T06:30:00.000Z'],
  },
  {
    zone: NY,
    change: NY_FALL,
    expression: 'cron(0/30 1-2 * * ? *)',
    start: '2026-11-01T04:00:00Z',
    rule: 'first',
    occurrences: ['2026-11-01T05:00:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-01T07:00:00.000Z', '2026-11-01T07:30:00.000Z'],
  },
  {
    zone: NY,
    change: NY_FALL,
    expression: 'cron(0/30 1-2 * * ? *)',
    start: '2026-11-01T04:00:00Z',
    rule: 'both',
    occurrences: ['2026-11-01T05:00:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-01T06:00:00.000Z', '2026-11-01T06:30:00.000Z'],
  },
  {
    zone: NY,
    change: NY_FALL,
    expression: 'rate(1 day)',
    start: '2026-10-31T13:00:00Z',
    rule: 'elapsed',
    occurrences: ['2026-10-31T13:00:00.000Z', '2026-11-01T13:00:00.000Z', '2026-11-02T13:00:00.000Z'],
  },
  // Europe/Berlin: 02:30 does not exist on 29 March, and comes twice on 25 October.
  {
    zone: BERLIN,
    change: BERLIN_SPRING,
    expression: 'cron(30 2 * * ? *)',
    start: '2026-03-28T00:00:00Z',
    rule: 'skip',
    occurrences: ['2026-03-28T01:30:00.000Z', '2026-03-30T00:30:00.000Z', '2026-03-31T00:30:00.000Z'],
  },
  {
    zone: BERLIN,
    change: BERLIN_SPRING,
    expression: 'cron(30 2 * * ? *)',
    start: '2026-03-28T00:00:00Z',
    rule: 'shift',
    occurrences: ['2026-03-28T01:30:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z'],
  },
  {
    zone: BERLIN,
    change: BERLIN_SPRING,
    expression: 'rate(1 day)',
    start: '2026-03-28T08:00:00Z',
    rule: 'elapsed',
    occurrences: ['2026-03-28T08:00:00.000Z', '2026-03-29T08:00:00.000Z', '2026-03-30T08:00:00.000Z'],
  },
  {
    zone: BERLIN,
    change: BERLIN_FALL,
    expression: 'cron(30 2 * * ? *)',
    start: '2026-10-24T00:00:00Z',
    rule: 'first',
    occurrences: ['2026-10-24T00:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z'],
  },
  {
    zone: BERLIN,
    change: BERLIN_FALL,
    expression: 'cron(30 2 * * ? *)',
    start: '2026-10-24T00:00:00Z',
    rule: 'both',
    occurrences: ['2026-10-24T00:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-25T01:30:00.000Z'],
  },
  {
    zone: BERLIN,
    change: BERLIN_FALL,
    expression: 'rate(1 day)',
    start: '2026-10-24T07:00:00Z',
    rule: 'elapsed',
    occurrences: ['2026-10-24T07:00:00.000Z', '2026-10-25T07:00:00.000Z', '2026-10-26T07:00:00.000Z'],
  },
  // Australia/Lord_Howe, half an hour: 01:45 comes twice on 5 April; 02:15 does not exist on 4 October.
  {
    zone: LORD_HOWE,
    change: LH_FALL,
    expression: 'cron(45 1 * * ? *)',
    start: '2026-04-03T00:00:00Z',
    rule: 'first',
    occurrences: ['2026-04-03T14:45:00.000Z', '2026-04-04T14:45:00.000Z', '2026-04-05T15:15:00.000Z'],
  },
  {
    zone: LORD_HOWE,
    change: LH_FALL,
    expression: 'cron(45 1 * * ? *)',
    start: '2026-04-03T00:00:00Z',
    rule: 'both',
    occurrences: ['2026-04-03T14:45:00.000Z', '2026-04-04T14:45:00.000Z', '2026-04-04T15:15:00.000Z'],
  },
  {
    zone: LORD_HOWE,
    change: LH_FALL,
    expression: 'rate(1 day)',
    start: '2026-04-03T22:00:00Z',
    rule: 'elapsed',
    occurrences: ['2026-04-03T22:00:00.000Z', '2026-04-04T22:00:00.000Z', '2026-04-05T22:00:00.000Z'],
  },
  {
    zone: LORD_HOWE,
    change: LH_SPRING,
    expression: 'cron(15 2 * * ? *)',
    start: '2026-10-02T00:00:00Z',
    rule: 'skip',
    occurrences: ['2026-10-02T15:45:00.000Z', '2026-10-04T15:15:00.000Z', '2026-10-05T15:15:00.000Z'],
  },
  {
    zone: LORD_HOWE,
    change: LH_SPRING,
    expression: 'cron(15 2 * * ? *)',
    start: '2026-10-02T00:00:00Z',
    rule: 'shift',
    occurrences: ['2026-10-02T15:45:00.000Z', '2026-10-03T15:30:00.000Z', '2026-10-04T15:15:00.000Z'],
  },
  {
    zone: LORD_HOWE,
    change: LH_SPRING,
    expression: 'rate(1 day)',
    start: '2026-10-02T22:30:00Z',
    rule: 'elapsed',
    occurrences: ['2026-10-02T22:30:00.000Z', '2026-10-03T22:30:00.000Z', '2026-10-04T22:30:00.000Z'],
  },
  // America/Santiago, at midnight: 23:30 comes twice on 4 April; 00:00 to 00:59 do not exist on 6 September.
  {
    zone: SANTIAGO,
    change: SANTIAGO_FALL,
    expression: 'cron(30 23 * * ? *)',
    start: '2026-04-03T12:00:00Z',
    rule: 'first',
    occurrences: ['2026-04-04T02:30:00.000Z', '2026-04-05T02:30:00.000Z', '2026-04-06T03:30:00.000Z'],
  },
  {
    zone: SANTIAGO,
    change: SANTIAGO_FALL,
    expression: 'cron(30 23 * * ? *)',
    start: '2026-04-03T12:00:00Z',
    rule: 'both',
    occurrences: ['2026-04-04T02:30:00.000Z', '2026-04-05T02:30:00.000Z', '2026-04-05T03:30:00.000Z'],
  },
  {
    zone: SANTIAGO,
    change: SANTIAGO_FALL,
    expression: 'rate(1 day)',
    start: '2026-04-03T12:00:00Z',
    rule: 'elapsed',
    occurrences: ['2026-04-03T12:00:00.000Z', '2026-04-04T12:00:00.000Z', '2026-04-05T12:00:00.000Z'],
  },
  {
    zone: SANTIAGO,
    change: SANTIAGO_SPRING,
    expression: 'cron(0 0 * * ? *)',
    start: '2026-09-05T00:00:00Z',
    rule: 'skip',
    occurrences: ['2026-09-05T04:00:00.000Z', '2026-09-07T03:00:00.000Z', '2026-09-08T03:00:00.000Z'],
  },
  {
    zone: SANTIAGO,
    change: SANTIAGO_SPRING,
    expression: 'cron(0 0 * * ? *)',
    start: '2026-09-05T00:00:00Z',
    rule: 'shift',
    occurrences: ['2026-09-05T04:00:00.000Z', '2026-09-06T04:00:00.000Z', '2026-09-07T03:00:00.000Z'],
  },
  {
    zone: SANTIAGO,
    change: SANTIAGO_SPRING,
    expression: 'cron(30 0 * * ? *)',
    start: '2026-09-05T00:00:00Z',
    rule: 'skip',
    occurrences: ['2026-09-05T04:30:00.000Z', '2026-09-07T03:30:00.000Z', '2026-09-08T03:30:00.000Z'],
  },
  {
    zone: SANTIAGO,
    change: SANTIAGO_SPRING,
    expression: 'cron(30 0 * * ? *)',
    start: '2026-09-05T00:00:00Z',
    rule: 'shift',
    occurrences: ['2026-09-05T04:30:00.000Z', '2026-09-06T04:00:00.000Z', '2026-09-07T03:30:00.000Z'],
  },
  {
    zone: SANTIAGO,
    change: SANTIAGO_SPRING,
    expression: 'rate(1 day)',
    start: '2026-09-05T13:00:00Z',
    rule: 'elapsed',
    occurrences: ['2026-09-05T13:00:00.000Z', '2026-09-06T13:00:00.000Z', '2026-09-07T13:00:00.000Z'],
  },
  // Antarctica/Troll, two hours: 01:30 and 02:30 do not exist on 29 March; 02:30 comes twice on 25 October.
  {
    zone: TROLL,
    change: TROLL_SPRING,
    expression: 'cron(30 1 * * ? *)',
    start: '2026-03-28T00:00:00Z',
    rule: 'skip',
    occurrences: ['2026-03-28T01:30:00.000Z', '2026-03-29T23:30:00.000Z', '2026-03-30T23:30:00.000Z'],
  },
  {
    zone: TROLL,
    change: TROLL_SPRING,
    expression: 'cron(30 1 * * ? *)',
    start: '2026-03-28T00:00:00Z',
    rule: 'shift',
    occurrences: ['2026-03-28T01:30:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-29T23:30:00.000Z'],
  },
  {
    zone: TROLL,
    change: TROLL_SPRING,
    expression: 'cron(30 2 * * ? *)',
    start: '2026-03-28T00:00:00Z',
    rule: 'skip',
    occurrences: ['2026-03-28T02:30:00.000Z', '2026-03-30T00:30:00.000Z', '2026-03-31T00:30:00.000Z'],
  },
  {
    zone: TROLL,
    change: TROLL_SPRING,
    expression: 'cron(30 2 * * ? *)',
    start: '2026-03-28T00:00:00Z',
    rule: 'shift',
    occurrences: ['2026-03-28T02:30:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z'],
  },
  {
    zone: TROLL,
    change: TROLL_SPRING,
    expression: 'rate(1 day)',
    start: '2026-03-28T09:00:00Z',
    rule: 'elapsed',
    occurrences: ['2026-03-28T09:00:00.000Z', '2026-03-29T09:00:00.000Z', '2026-03-30T09:00:00.000Z'],
  },
  {
    zone: TROLL,
    change: TROLL_FALL,
    expression: 'cron(30 2 * * ? *)',
    start: '2026-10-24T00:00:00Z',
    rule: 'first',
    occurrences: ['2026-10-24T00:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-26T02:30:00.000Z'],
  },
  {
    zone: TROLL,
    change: TROLL_FALL,
    expression: 'cron(30 2 * * ? *)',
    start: '2026-10-24T00:00:00Z',
    rule: 'both',
    occurrences: ['2026-10-24T00:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-25T02:30:00.000Z'],
  },
  {
    zone: TROLL,
    change: TROLL_FALL,
    expression: 'rate(1 day)',
    start: '2026-10-24T07:00:00Z',
    rule: 'elapsed',
    occurrences: ['2026-10-24T07:00:00.000Z', '2026-10-25T07:00:00.000Z', '2026-10-26T07:00:00.000Z'],
  },
];
