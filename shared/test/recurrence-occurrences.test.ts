import { describe, expect, it } from 'vitest';
import { cursorAt, firstCursor, nextOccurrences } from '../src/domain/recurrence/occurrences.js';
import { firstOccurrences, specOf } from './recurrence-kit.js';

const at = (iso: string) => Date.parse(iso);
const isos = (instants: number[]) => instants.map((instant) => new Date(instant).toISOString());

describe('the offset within the minute', () => {
  it('is added to each cron occurrence: 09:00 with 250 is 09:00:00.250', () => {
    const spec = specOf('cron(0 9 * * ? *)', '2026-01-01T00:00:00Z', { offsetMs: 250 });
    expect(firstOccurrences(spec, 2)).toEqual(['2026-01-01T09:00:00.250Z', '2026-01-02T09:00:00.250Z']);
  });

  it('is added to each rate() occurrence, counted from the minute of the start', () => {
    const spec = specOf('rate(5 minutes)', '2026-01-01T09:00:00Z', { offsetMs: 59_999 });
    expect(firstOccurrences(spec, 2)).toEqual(['2026-01-01T09:00:59.999Z', '2026-01-01T09:05:59.999Z']);
  });

  it('leaves out an occurrence whose offset would put it before the start', () => {
    const spec = specOf('rate(1 minute)', '2026-01-01T09:00:30Z', { offsetMs: 250 });
    expect(firstOccurrences(spec, 2)).toEqual(['2026-01-01T09:01:00.250Z', '2026-01-01T09:02:00.250Z']);
  });

  it('counts "strictly after" on the offset instant: an occurrence at the cursor is not next again', () => {
    const spec = specOf('cron(0 9 * * ? *)', '2026-01-01T00:00:00Z', { offsetMs: 250 });
    expect(isos(nextOccurrences(spec, { after: at('2026-01-01T09:00:00.250Z'), fired: 1 }, 1))).toEqual(['2026-01-02T09:00:00.250Z']);
    expect(isos(nextOccurrences(spec, { after: at('2026-01-01T09:00:00.249Z'), fired: 0 }, 1))).toEqual(['2026-01-01T09:00:00.250Z']);
  });
});

describe('start, end and count', () => {
  it('runs a cron occurrence at its start, and none before it', () => {
    expect(firstOccurrences(specOf('cron(0 9 * * ? *)', '2026-01-01T09:00:00Z'), 1)).toEqual(['2026-01-01T09:00:00.000Z']);
    expect(firstOccurrences(specOf('cron(0 9 * * ? *)', '2026-01-01T09:00:00.001Z'), 1)).toEqual(['2026-01-02T09:00:00.000Z']);
  });

  it('runs rate() from its start, as EventBridge runs it from its start date', () => {
    expect(firstOccurrences(specOf('rate(2 hours)', '2026-01-01T09:00:00Z'), 3)).toEqual([
      '2026-01-01T09:00:00.000Z',
      '2026-01-01T11:00:00.000Z',
      '2026-01-01T13:00:00.000Z',
    ]);
  });

  it('runs nothing at or after the end', () => {
    const spec = specOf('cron(0 9 * * ? *)', '2026-01-01T00:00:00Z', { end: at('2026-01-03T09:00:00Z') });
    expect(firstOccurrences(spec, 5)).toEqual(['2026-01-01T09:00:00.000Z', '2026-01-02T09:00:00.000Z']);
  });

  it('runs at most count occurrences, counted by the cursor', () => {
    const spec = specOf('rate(1 day)', '2026-01-01T09:00:00Z', { count: 3 });
    expect(firstOccurrences(spec, 5)).toHaveLength(3);
    expect(isos(nextOccurrences(spec, { after: at('2026-01-02T09:00:00Z'), fired: 2 }, 5))).toEqual(['2026-01-03T09:00:00.000Z']);
    expect(nextOccurrences(spec, { after: at('2026-01-03T09:00:00Z'), fired: 3 }, 5)).toEqual([]);
  });

  it('takes the number fired from the cursor, not from the calendar: a series that fired elsewhere stops at its count', () => {
    const spec = specOf('cron(0 9 * * ? *)', '2026-01-01T00:00:00Z', { count: 3 });
    expect(isos(nextOccurrences(spec, { after: at('2026-01-01T10:00:00Z'), fired: 2 }, 5))).toEqual(['2026-01-02T09:00:00.000Z']);
  });

  it('counts the occurrences from the start where no cursor is kept', () => {
    const spec = specOf('cron(0 9 * * ? *)', '2026-01-01T00:00:00Z', { count: 3 });
    expect(firstCursor(spec)).toEqual({ after: at('2025-12-31T23:59:59.999Z'), fired: 0 });
    expect(cursorAt(spec, at('2026-01-02T09:00:00Z'))).toEqual({ after: at('2026-01-02T09:00:00Z'), fired: 2 });
    expect(cursorAt(spec, at('2026-02-01T00:00:00Z'))).toEqual({ after: at('2026-02-01T00:00:00Z'), fired: 3 });
  });

  it('returns fewer than asked, or none, when the calendar runs out', () => {
    expect(firstOccurrences(specOf('cron(0 0 1 1 ? 2027)', '2026-01-01T00:00:00Z'), 3)).toEqual(['2027-01-01T00:00:00.000Z']);
    expect(firstOccurrences(specOf('cron(0 0 31 2 ? *)', '2026-01-01T00:00:00Z'), 1)).toEqual([]);
  });
});
