import { describe, expect, it } from 'vitest';
import { parseDueDate, toIso } from '../src/domain/dates.js';

const utc = (iso: string): number => new Date(iso).getTime();

describe('due dates', () => {
  it.each([
    ['without an offset, as UTC', '2030-06-15T12:30:00', '2030-06-15T12:30:00.000Z'],
    ['with Z', '2030-06-15T12:30:00Z', '2030-06-15T12:30:00.000Z'],
    ['with a lower-case z and a space for T', '2030-06-15 12:30:00z', '2030-06-15T12:30:00.000Z'],
    ['with +02:00', '2030-06-15T12:30:00+02:00', '2030-06-15T10:30:00.000Z'],
    ['with -0530', '2030-06-15T12:30:00-0530', '2030-06-15T18:00:00.000Z'],
    ['with an hour-only offset', '2030-06-15T12:30:00+01', '2030-06-15T11:30:00.000Z'],
    ['across midnight through the offset', '2030-01-01T01:00:00+03:00', '2029-12-31T22:00:00.000Z'],
    ['with milliseconds', '2030-06-15T12:30:00.500Z', '2030-06-15T12:30:00.500Z'],
    ['with a one-digit fraction as tenths', '2030-06-15T12:30:00.5Z', '2030-06-15T12:30:00.500Z'],
    ['with a comma as decimal sign', '2030-06-15T12:30:00,25Z', '2030-06-15T12:30:00.250Z'],
    ['without seconds', '2030-06-15T12:30Z', '2030-06-15T12:30:00.000Z'],
    ['as a date alone, at midnight UTC', '2030-06-15', '2030-06-15T00:00:00.000Z'],
    ['on 29 February of a leap year', '2028-02-29T08:00:00Z', '2028-02-29T08:00:00.000Z'],
    ['in the first century as written, not as 19xx', '0050-06-15T12:00:00Z', '0050-06-15T12:00:00.000Z'],
  ])('parse %s', (_case, text, expected) => {
    expect(parseDueDate(text)).toBe(utc(expected));
  });

  it('drop digits below the millisecond instead of rounding them', () => {
    expect(parseDueDate('2030-06-15T12:30:00.123999999Z')).toBe(utc('2030-06-15T12:30:00.123Z'));
    expect(parseDueDate('2030-06-15T12:30:00.9999Z')).toBe(utc('2030-06-15T12:30:00.999Z'));
  });

  it.each([
    ['garbage', 'tomorrow at noon'],
    ['an empty string', ''],
    ['a bare number', '1781526600000'],
    ['31 February', '2030-02-31T10:00:00Z'],
    ['29 February of a common year', '2030-02-29'],
    ['31 April', '2030-04-31'],
    ['month 13', '2030-13-01'],
    ['month 0', '2030-00-10'],
    ['hour 25', '2030-06-15T25:00:00Z'],
    ['hour 24', '2030-06-15T24:00:00Z'],
    ['minute 60', '2030-06-15T12:60:00Z'],
    ['second 60', '2030-06-15T12:30:60Z'],
    ['an hour without minutes', '2030-06-15T12Z'],
    ['a named zone', '2030-06-15T12:30:00 CET'],
    ['an offset with 75 minutes', '2030-06-15T12:30:00+02:75'],
    ['an offset of 99 hours', '2030-06-15T12:30:00+99:00'],
    ['an offset of 24 hours', '2030-06-15T12:30:00-2400'],
  ])('reject %s', (_case, text) => {
    expect(parseDueDate(text)).toBeUndefined();
  });

  it('print back as ISO-8601 UTC with milliseconds', () => {
    expect(toIso(utc('2030-06-15T12:30:00.007Z'))).toBe('2030-06-15T12:30:00.007Z');
  });
});
