import { describe, expect, it } from 'vitest';
import {
  materialisation,
  materialisedAfter,
  occurrenceEvent,
  seriesRequestHash,
  seriesTakeId,
  specFromStored,
  storedSpec,
  type StoredSpec,
} from '../src/domain/series.js';
import { REASON } from '../src/domain/reasons.js';
import type { ParseResult } from '../src/domain/validation.js';
import { PARSED_AT, topicArn, validate } from './factories.js';
import { acmeTarget } from './ingest-kit.js';
import { specOf } from './recurrence-kit.js';

const MINUTE = 60_000;
const START = Date.parse('2030-03-18T00:00:00Z');

describe("a series' record", () => {
  it('keeps its spec as text and reads it back the same, end and count included or left out', () => {
    const full: StoredSpec = {
      schedule: 'cron(0 9 ? * MON-FRI *)',
      timezone: 'Europe/Berlin',
      start: START,
      end: START + 30 * 24 * 60 * MINUTE,
      count: 12,
      offsetMs: 250,
      gap: 'shift',
      overlap: 'both',
    };
    expect(storedSpec(specFromStored(full))).toEqual(full);
    const { end: _end, count: _count, ...open } = full;
    const read = specFromStored(open);
    expect(read).not.toHaveProperty('end');
    expect(read).not.toHaveProperty('count');
    expect(storedSpec(read)).toEqual(open);
    expect(read.dst).toEqual({ gap: 'shift', overlap: 'both' });
  });

  it('refuses to read a stored schedule that is not valid: a corrupt record, not a series', () => {
    const stored: StoredSpec = { schedule: 'cron(0 9 * * * *)', timezone: 'UTC', start: START, offsetMs: 0, gap: 'skip', overlap: 'first' };
    expect(() => specFromStored(stored)).toThrow(TypeError);
  });

  it('names the take that made an occurrence by the series and its version, so a repeated take finds its own', () => {
    expect(seriesTakeId({ id: 's-m-1', version: 3 })).toBe('s-m-1.v3');
    expect(seriesTakeId({ id: 's-m-1', version: 4 })).not.toBe(seriesTakeId({ id: 's-m-1', version: 3 }));
  });
});

describe("a series request's digest", () => {
  const fields: Readonly<Record<string, unknown>> = {
    schedule: 'rate(5 minutes)',
    timezone: 'UTC',
    start: '2030-03-18T00:00:00Z',
    end: '2030-04-18T00:00:00Z',
    count: 10,
    offset: 250,
    dst: { gap: 'skip', overlap: 'first' },
    catch_up_seconds: 60,
  };
  const content = { target: acmeTarget, payload: 'hi', failureTopic: undefined, user: 'billing', labels: ['a', 'b'] };
  const digest = seriesRequestHash(fields, content);

  it.each(Object.keys(fields))('differs when %s differs: another request with the same id is refused', (name) => {
    expect(seriesRequestHash({ ...fields, [name]: 'other' }, content)).not.toBe(digest);
    const { [name]: _left, ...without } = fields;
    expect(seriesRequestHash(without, content)).not.toBe(digest);
  });

  it("differs when the delivery's content differs, and not when only the labels' order does", () => {
    expect(seriesRequestHash(fields, { ...content, target: `${acmeTarget}-2` })).not.toBe(digest);
    expect(seriesRequestHash(fields, { ...content, payload: 'ho' })).not.toBe(digest);
    expect(seriesRequestHash(fields, { ...content, failureTopic: acmeTarget })).not.toBe(digest);
    expect(seriesRequestHash(fields, { ...content, user: undefined })).not.toBe(digest);
    expect(seriesRequestHash(fields, { ...content, labels: ['a'] })).not.toBe(digest);
    expect(seriesRequestHash(fields, { ...content, labels: ['b', 'a'] })).toBe(digest);
    expect(seriesRequestHash(fields, { ...content })).toBe(digest);
  });
});

describe("a series' occurrences", () => {
  const spec = specOf('rate(1 minute)', new Date(START).toISOString());

  it("leaves an occurrence due exactly at the horizon to the next take, as the series' next", () => {
    const plan = materialisation(
      spec,
      { cursor: { after: START - 1, fired: 0 } },
      { now: START - MINUTE, horizonMs: START + MINUTE, catchUpMs: MINUTE, perMinute: 10 },
    );
    expect(plan.occurrences).toEqual([{ dueAt: START, occurrence: 1 }]);
    expect(plan.next).toBe(START + MINUTE);
  });

  it("carry the series' user and labels, and neither when it has none", () => {
    const event = occurrenceEvent({ id: 's-m-1', tenant: 'acme', user: 'billing', target: acmeTarget, labels: ['x'] }, 'hi', {
      dueAt: START,
      occurrence: 1,
    });
    expect(event).toMatchObject({ user: 'billing', labels: ['x'], target: acmeTarget, payload: 'hi', version: 1 });
    const bare = occurrenceEvent({ id: 's-m-1', tenant: 'acme', target: acmeTarget, labels: [] }, 'hi', { dueAt: START, occurrence: 1 });
    expect(bare).not.toHaveProperty('user');
    expect(bare).not.toHaveProperty('labels');
  });

  it('already materialised are those after a time up to the cursor: none when the cursor is not past it', () => {
    const series = { spec, cursor: { after: START + 2 * MINUTE, fired: 3 } };
    expect(materialisedAfter(series, START - 1)).toEqual([START, START + MINUTE, START + 2 * MINUTE]);
    expect(materialisedAfter(series, START)).toEqual([START + MINUTE, START + 2 * MINUTE]);
    expect(materialisedAfter(series, START + 2 * MINUTE)).toEqual([]);
  });
});

describe('a series request', () => {
  const series = (overrides: Record<string, unknown>) => validate({ date: undefined, schedule: 'rate(1 minute)', ...overrides });
  const refusal = (result: ParseResult) => (result.accepted ? undefined : { reason: result.error.reason, details: result.error.details });

  it.each(['timezone', 'start', 'end', 'count', 'offset', 'dst', 'catch_up_seconds'])(
    'is a one-off with "date": %s, a series field beside it, is refused naming it',
    (field) => {
      expect(refusal(validate({ [field]: 1 }))).toEqual({ reason: REASON.INVALID_FIELD, details: { field } });
    },
  );

  it('takes "date" or "schedule", never both nor neither', () => {
    expect(refusal(validate({ schedule: 'rate(1 minute)' }))).toEqual({ reason: REASON.INVALID_FIELD, details: { field: 'schedule' } });
    expect(refusal(validate({ date: undefined }))).toEqual({ reason: REASON.MISSING_FIELD, details: { field: 'date' } });
    expect(series({}).accepted).toBe(true);
  });

  it('owes nothing due before it was published: a start in the past counts the occurrences since toward count', () => {
    const start = new Date(PARSED_AT - 10 * MINUTE).toISOString();
    // Eleven minutes due from start to publishing (start included): five of them, and none left.
    expect(refusal(series({ start, count: 5 }))).toMatchObject({ reason: REASON.SCHEDULE_NEVER_FIRES, details: { field: 'count' } });
    const counted = series({ start, count: 20 });
    if (!counted.accepted || counted.request.kind !== 'series') throw new Error('not a series');
    expect(counted.request.dueAt).toBeGreaterThanOrEqual(PARSED_AT);
    expect(counted.request.series.cursor.fired).toBe(10);
    const open = series({ start });
    if (!open.accepted || open.request.kind !== 'series') throw new Error('not a series');
    expect(open.request.dueAt).toBe(counted.request.dueAt);
    expect(open.request.series.cursor).toEqual({ after: PARSED_AT - 1, fired: 0 });
  });

  it("carries the request's user, failure topic and labels to its occurrences, and no labels when it has none", () => {
    const labelled = series({ labels: ['x'], failure_topic: topicArn('failures') });
    if (!labelled.accepted || labelled.request.kind !== 'series') throw new Error('not a series');
    expect(labelled.request.series).toMatchObject({ user: 'alice', labels: ['x'], failureTopic: topicArn('failures') });
    const bare = series({ labels: [] });
    if (!bare.accepted || bare.request.kind !== 'series') throw new Error('not a series');
    expect(bare.request.series).not.toHaveProperty('labels');
  });
});
