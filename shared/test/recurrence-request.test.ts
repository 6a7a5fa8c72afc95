import { describe, expect, it } from 'vitest';
import { RECURRENCE_REASON } from '../src/domain/recurrence/reasons.js';
import { checkRecurrence, type RecurrenceFields } from '../src/domain/recurrence/request.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');

describe('the checker of the recurring fields', () => {
  it('fills in the defaults: UTC, start now, offset 0, EventBridge daylight-saving rule', () => {
    expect(checkRecurrence({ schedule: 'cron(0 9 * * ? *)' }, NOW)).toEqual({
      ok: true,
      spec: {
        expression: { kind: 'cron', text: 'cron(0 9 * * ? *)', pattern: '0 0 9 * * * *' },
        timezone: 'UTC',
        start: NOW,
        offsetMs: 0,
        dst: { gap: 'skip', overlap: 'first' },
      },
    });
  });

  it('takes every field, the zone by its canonical name', () => {
    const check = checkRecurrence(
      {
        schedule: 'rate(5 minutes)',
        timezone: 'US/Eastern',
        start: '2026-07-01T00:00:00Z',
        end: '2026-08-01T00:00:00Z',
        count: 10,
        offset: 250,
        dst: { gap: 'shift' },
      },
      NOW,
    );
    expect(check).toEqual({
      ok: true,
      spec: {
        expression: { kind: 'rate', text: 'rate(5 minutes)', periodMs: 300_000 },
        timezone: 'America/New_York',
        start: Date.parse('2026-07-01T00:00:00Z'),
        end: Date.parse('2026-08-01T00:00:00Z'),
        count: 10,
        offsetMs: 250,
        dst: { gap: 'shift', overlap: 'first' },
      },
    });
  });

  it.each<[string, RecurrenceFields, string, Record<string, unknown>]>([
    ['no schedule', {}, RECURRENCE_REASON.INVALID_SCHEDULE_EXPRESSION, { field: 'schedule', problem: 'not a string' }],
    ['a bad expression', { schedule: 'cron(0 9 * * * *)' }, RECURRENCE_REASON.INVALID_SCHEDULE_EXPRESSION, { field: 'schedule' }],
    ['an unknown zone', { schedule: 'rate(1 day)', timezone: 'Mars/Olympus' }, RECURRENCE_REASON.UNKNOWN_TIMEZONE, { field: 'timezone' }],
    ['an offset for a zone', { schedule: 'rate(1 day)', timezone: '+05:00' }, RECURRENCE_REASON.UNKNOWN_TIMEZONE, { field: 'timezone' }],
    ['a zone that is not a string', { schedule: 'rate(1 day)', timezone: 5 }, RECURRENCE_REASON.UNKNOWN_TIMEZONE, { field: 'timezone' }],
    ['a start that is not a date', { schedule: 'rate(1 day)', start: 'tomorrow' }, RECURRENCE_REASON.INVALID_DATE, { field: 'start' }],
    ['an end that is not a date', { schedule: 'rate(1 day)', end: 20260701 }, RECURRENCE_REASON.INVALID_DATE, { field: 'end' }],
    [
      'an end before the start',
      { schedule: 'rate(1 day)', start: '2026-07-01T00:00:00Z', end: '2026-06-30T00:00:00Z' },
      RECURRENCE_REASON.END_BEFORE_START,
      { field: 'end', start: '2026-07-01T00:00:00.000Z', end: '2026-06-30T00:00:00.000Z' },
    ],
    [
      'an end at the start',
      { schedule: 'rate(1 day)', start: '2026-07-01T00:00:00Z', end: '2026-07-01T00:00:00Z' },
      RECURRENCE_REASON.END_BEFORE_START,
      { field: 'end' },
    ],
    ['a count of 0', { schedule: 'rate(1 day)', count: 0 }, RECURRENCE_REASON.INVALID_COUNT, { field: 'count' }],
    ['a fractional count', { schedule: 'rate(1 day)', count: 1.5 }, RECURRENCE_REASON.INVALID_COUNT, { field: 'count' }],
    ['a count as text', { schedule: 'rate(1 day)', count: '3' }, RECURRENCE_REASON.INVALID_COUNT, { field: 'count' }],
    ['a negative offset', { schedule: 'rate(1 day)', offset: -1 }, RECURRENCE_REASON.INVALID_OFFSET, { field: 'offset' }],
    ['an offset of a minute', { schedule: 'rate(1 day)', offset: 60_000 }, RECURRENCE_REASON.INVALID_OFFSET, { field: 'offset' }],
    ['a fractional offset', { schedule: 'rate(1 day)', offset: 0.5 }, RECURRENCE_REASON.INVALID_OFFSET, { field: 'offset' }],
    ['an unknown gap rule', { schedule: 'rate(1 day)', dst: { gap: 'later' } }, RECURRENCE_REASON.INVALID_DST_RULE, { field: 'dst' }],
    [
      'an unknown overlap rule',
      { schedule: 'rate(1 day)', dst: { overlap: 'last' } },
      RECURRENCE_REASON.INVALID_DST_RULE,
      { field: 'dst' },
    ],
    [
      'another key in dst',
      { schedule: 'rate(1 day)', dst: { gap: 'skip', fold: 'first' } },
      RECURRENCE_REASON.INVALID_DST_RULE,
      { field: 'dst' },
    ],
    ['dst as text', { schedule: 'rate(1 day)', dst: 'skip' }, RECURRENCE_REASON.INVALID_DST_RULE, { field: 'dst' }],
    ['dst as a list', { schedule: 'rate(1 day)', dst: ['skip'] }, RECURRENCE_REASON.INVALID_DST_RULE, { field: 'dst' }],
    ['31 February', { schedule: 'cron(0 0 31 2 ? *)' }, RECURRENCE_REASON.SCHEDULE_NEVER_FIRES, { field: 'schedule' }],
    ['a year gone by', { schedule: 'cron(0 0 1 1 ? 2025)' }, RECURRENCE_REASON.SCHEDULE_NEVER_FIRES, { field: 'schedule' }],
    [
      'an end before the first occurrence',
      { schedule: 'cron(0 9 1 * ? *)', start: '2026-06-02T00:00:00Z', end: '2026-06-30T00:00:00Z' },
      RECURRENCE_REASON.SCHEDULE_NEVER_FIRES,
      { field: 'end', first: '2026-07-01T09:00:00.000Z' },
    ],
    [
      'an end gone by',
      { schedule: 'rate(1 hour)', start: '2026-05-01T00:00:00Z', end: '2026-05-02T00:00:00Z' },
      RECURRENCE_REASON.SCHEDULE_NEVER_FIRES,
      { field: 'end' },
    ],
  ])('refuses %s', (_, fields, reason, details) => {
    const check = checkRecurrence(fields, NOW);
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.refusal.reason).toBe(reason);
    expect(check.refusal.details).toMatchObject(details);
    expect(check.refusal.message).toMatch(new RegExp(String(details.field)));
  });
});
