import { describe, expect, it } from 'vitest';
import { parseScheduleExpression } from '../src/domain/recurrence/expression.js';
import { firstOccurrences, specOf } from './recurrence-kit.js';

// January 2026 starts on a Thursday; February on a Sunday; August on a Saturday.

describe('rate() expressions', () => {
  it.each([
    ['rate(1 minute)', 60_000],
    ['rate(5 minutes)', 300_000],
    ['rate(1 hour)', 3_600_000],
    ['rate(2 hours)', 7_200_000],
    ['rate(1 day)', 86_400_000],
    ['rate(7 days)', 604_800_000],
  ])('takes %s as every %i ms', (text, periodMs) => {
    expect(parseScheduleExpression(text)).toEqual({ ok: true, expression: { kind: 'rate', text, periodMs } });
  });

  it.each([
    ['rate(1 minutes)', 'singular'],
    ['rate(5 minute)', 'singular'],
    ['rate(0 minutes)', 'at least 1'],
    ['rate(-1 minutes)', 'at least 1'],
    ['rate(1.5 hours)', 'at least 1'],
    ['rate(05 minutes)', 'at least 1'],
    ['rate(1 second)', 'not minute(s), hour(s) or day(s)'],
    ['rate(2 weeks)', 'not minute(s), hour(s) or day(s)'],
    ['rate(5  minutes)', 'not rate(value unit)'],
    ['rate(5 minutes', 'not rate(value unit)'],
    ['rate(99999999999999999 days)', 'too long a period'],
  ])('refuses %s (%s)', (text, problem) => {
    const check = parseScheduleExpression(text);
    expect(check.ok).toBe(false);
    expect(check.ok ? '' : check.problem).toContain(problem);
  });
});

describe('cron() expressions: every EventBridge feature, on its calendar', () => {
  it.each([
    ['every day at 10:00', 'cron(0 10 * * ? *)', '2026-01-01T00:00:00Z', ['2026-01-01T10:00:00.000Z', '2026-01-02T10:00:00.000Z']],
    [
      'the day-of-week field deciding, day-of-month ?',
      'cron(0 10 ? * * *)',
      '2026-01-01T00:00:00Z',
      ['2026-01-01T10:00:00.000Z', '2026-01-02T10:00:00.000Z'],
    ],
    ['1 is Sunday', 'cron(0 8 ? * 1 *)', '2026-01-01T00:00:00Z', ['2026-01-04T08:00:00.000Z', '2026-01-11T08:00:00.000Z']],
    ['2 is Monday', 'cron(0 8 ? * 2 *)', '2026-01-01T00:00:00Z', ['2026-01-05T08:00:00.000Z', '2026-01-12T08:00:00.000Z']],
    ['7 is Saturday', 'cron(0 8 ? * 7 *)', '2026-01-01T00:00:00Z', ['2026-01-03T08:00:00.000Z', '2026-01-10T08:00:00.000Z']],
    [
      'L alone in day-of-week is Saturday',
      'cron(0 8 ? * L *)',
      '2026-01-01T00:00:00Z',
      ['2026-01-03T08:00:00.000Z', '2026-01-10T08:00:00.000Z'],
    ],
    ['a range of names', 'cron(15 12 ? * MON-FRI *)', '2026-01-02T13:00:00Z', ['2026-01-05T12:15:00.000Z', '2026-01-06T12:15:00.000Z']],
    [
      'a list of names in lower case',
      'cron(0 9 ? * sun,sat *)',
      '2026-01-01T00:00:00Z',
      ['2026-01-03T09:00:00.000Z', '2026-01-04T09:00:00.000Z'],
    ],
    ['# the second Tuesday', 'cron(0 9 ? * 3#2 *)', '2026-01-01T00:00:00Z', ['2026-01-13T09:00:00.000Z', '2026-02-10T09:00:00.000Z']],
    ['# with a name', 'cron(0 9 ? * MON#1 *)', '2026-01-01T00:00:00Z', ['2026-01-05T09:00:00.000Z', '2026-02-02T09:00:00.000Z']],
    ['dL the last Friday', 'cron(0 9 ? * 6L *)', '2026-01-01T00:00:00Z', ['2026-01-30T09:00:00.000Z', '2026-02-27T09:00:00.000Z']],
    [
      'L the last day of the month',
      'cron(0 18 L * ? *)',
      '2026-01-01T00:00:00Z',
      ['2026-01-31T18:00:00.000Z', '2026-02-28T18:00:00.000Z', '2026-03-31T18:00:00.000Z'],
    ],
    [
      'LW the last weekday',
      'cron(0 9 LW * ? *)',
      '2026-01-01T00:00:00Z',
      ['2026-01-30T09:00:00.000Z', '2026-02-27T09:00:00.000Z', '2026-03-31T09:00:00.000Z'],
    ],
    [
      '15W the weekday nearest the 15th',
      'cron(0 9 15W * ? *)',
      '2026-01-01T00:00:00Z',
      ['2026-01-15T09:00:00.000Z', '2026-02-16T09:00:00.000Z'],
    ],
    ['1W, not crossing into the month before', 'cron(0 9 1W * ? *)', '2026-07-02T00:00:00Z', ['2026-08-03T09:00:00.000Z']],
    [
      'a/n counting from a',
      'cron(1/20 10 * * ? *)',
      '2026-01-01T00:00:00Z',
      ['2026-01-01T10:01:00.000Z', '2026-01-01T10:21:00.000Z', '2026-01-01T10:41:00.000Z'],
    ],
    ['*/n', 'cron(*/30 10 * * ? *)', '2026-01-01T00:00:00Z', ['2026-01-01T10:00:00.000Z', '2026-01-01T10:30:00.000Z']],
    [
      'a-b/n',
      'cron(0 8-18/5 * * ? *)',
      '2026-01-01T00:00:00Z',
      ['2026-01-01T08:00:00.000Z', '2026-01-01T13:00:00.000Z', '2026-01-01T18:00:00.000Z'],
    ],
    [
      'a step in day-of-month',
      'cron(0 0 1/10 * ? *)',
      '2026-01-01T00:00:00Z',
      ['2026-01-01T00:00:00.000Z', '2026-01-11T00:00:00.000Z', '2026-01-21T00:00:00.000Z'],
    ],
    [
      'month names and a list',
      'cron(0 0 1 JAN,jul ? *)',
      '2026-01-01T00:00:00Z',
      ['2026-01-01T00:00:00.000Z', '2026-07-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
    ],
    ['a year range', 'cron(0 0 1 1 ? 2028-2029)', '2026-01-01T00:00:00Z', ['2028-01-01T00:00:00.000Z', '2029-01-01T00:00:00.000Z']],
    ['29 February', 'cron(0 0 29 2 ? *)', '2026-01-01T00:00:00Z', ['2028-02-29T00:00:00.000Z', '2032-02-29T00:00:00.000Z']],
    ['every minute', 'cron(* * * * ? *)', '2026-01-01T00:00:00Z', ['2026-01-01T00:00:00.000Z', '2026-01-01T00:01:00.000Z']],
  ])('%s: %s', (_, text, start, expected) => {
    expect(firstOccurrences(specOf(text, start), expected.length)).toEqual(expected);
  });

  it('writes the croner pattern: seconds at 0, a/n as a range, dL as d#L, ? as *', () => {
    const pattern = (text: string) => {
      const check = parseScheduleExpression(text);
      return check.ok && check.expression.kind === 'cron' ? check.expression.pattern : check;
    };
    expect(pattern('cron(1/10 * * * ? *)')).toBe('0 1-59/10 * * * * *');
    expect(pattern('cron(0 9 ? * 6L *)')).toBe('0 0 9 * * 6#L *');
    expect(pattern('cron(0 9 ? * L *)')).toBe('0 0 9 * * 7 *');
    expect(pattern('cron(0 9 ? JAN-MAR MON-FRI 2027)')).toBe('0 0 9 * 1-3 2-6 2027');
  });
});

describe('cron() expressions: what EventBridge refuses', () => {
  it.each([
    ['both day fields set', 'cron(0 10 * * * *)', 'one of day-of-month and day-of-week must be ?'],
    ['both day fields ?', 'cron(0 10 ? * ? *)', 'one of day-of-month and day-of-week must be ?'],
    ['? outside the day fields', 'cron(? 10 * * ? *)', '? stands only in'],
    ['five fields', 'cron(0 10 * * ?)', 'six fields'],
    ['seven fields', 'cron(0 0 10 * * ? *)', 'six fields'],
    ['minute 60', 'cron(60 10 * * ? *)', 'minutes: "60"'],
    ['hour 24', 'cron(0 24 * * ? *)', 'hours: "24"'],
    ['day 0', 'cron(0 10 0 * ? *)', 'day-of-month: "0"'],
    ['day 32', 'cron(0 10 32 * ? *)', 'day-of-month: "32"'],
    ['month 13', 'cron(0 10 ? 13 MON *)', 'month: "13"'],
    ['weekday 0 (Sunday is 1)', 'cron(0 10 ? * 0 *)', 'day-of-week: "0"'],
    ['weekday 8', 'cron(0 10 ? * 8 *)', 'day-of-week: "8"'],
    ['a name that is not one', 'cron(0 10 ? * SUNDAY *)', 'day-of-week: "SUNDAY"'],
    ['year 1969', 'cron(0 10 * * ? 1969)', 'year: "1969"'],
    ['year 2200', 'cron(0 10 * * ? 2200)', 'year: "2200"'],
    ['two # expressions', 'cron(0 10 ? * 3#1,6#3 *)', 'stand alone'],
    ['# beyond the fifth week', 'cron(0 10 ? * 3#6 *)', '1 to 5'],
    ['a step in day-of-week', 'cron(0 10 ? * MON/2 *)', 'not a value, a range or a step'],
    ['L in a list', 'cron(0 10 L,15 * ? *)', 'stand alone'],
    ['W in a range', 'cron(0 10 1-15W * ? *)', 'stand alone'],
    ['a backward range', 'cron(0 10 ? * FRI-MON *)', 'runs backwards'],
    ['a backward hour range', 'cron(0 22-2 * * ? *)', 'runs backwards'],
    ['a step of 0', 'cron(*/0 * * * ? *)', 'at least 1'],
    ['two steps', 'cron(1/5/2 * * * ? *)', 'not a value, a range or a step'],
    ['not an expression', 'every day at ten', 'not rate(value unit) or cron('],
    ['nothing', '', 'not rate(value unit) or cron('],
    ['too long', `cron(${'1,'.repeat(130)}1 10 * * ? *)`, 'longer than 256'],
  ])('%s: %s', (_, text, problem) => {
    const check = parseScheduleExpression(text);
    expect(check.ok).toBe(false);
    expect(check.ok ? '' : check.problem).toContain(problem);
  });
});
