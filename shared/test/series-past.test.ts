import { describe, expect, it } from 'vitest';
import { lastOccurrences } from '../src/app/series-history.js';
import { EVENT_STATE, type EventRecord } from '../src/domain/lifecycle.js';
import { pastOccurrenceOutcomes, pastOccurrences } from '../src/domain/series-past.js';
import type { SeriesRecord } from '../src/domain/series.js';
import { occurrenceId } from '../src/domain/table-keys.js';
import { specOf } from './recurrence-kit.js';

const MINUTE = 60_000;
const START = Date.parse('2030-03-18T00:00:00Z');
const at = (minutes: number) => START + minutes * MINUTE;

describe("a series' last occurrences", () => {
  // Ten occurrences materialised, one a minute from START: the cursor is past the tenth.
  const everyMinute = { spec: specOf('rate(1 minute)', '2030-03-18T00:00:00Z'), cursor: { after: at(9), fired: 10 } };

  it('are those due by now, newest first, numbered as the series counts them: not those materialised and still to come', () => {
    expect(pastOccurrences(everyMinute, at(5.5), 5)).toEqual([
      { dueAt: at(5), occurrence: 6 },
      { dueAt: at(4), occurrence: 5 },
      { dueAt: at(3), occurrence: 4 },
      { dueAt: at(2), occurrence: 3 },
      { dueAt: at(1), occurrence: 2 },
    ]);
    // Due exactly now: come.
    expect(pastOccurrences(everyMinute, at(5), 1)).toEqual([{ dueAt: at(5), occurrence: 6 }]);
  });

  it('are fewer when fewer have come, and none before the first', () => {
    expect(pastOccurrences(everyMinute, at(1.5), 5)).toEqual([
      { dueAt: at(1), occurrence: 2 },
      { dueAt: at(0), occurrence: 1 },
    ]);
    expect(pastOccurrences(everyMinute, at(-1), 5)).toEqual([]);
  });

  it('stop at the cursor: an occurrence the takes have not reached is not past, however late', () => {
    expect(pastOccurrences(everyMinute, at(60), 2)).toEqual([
      { dueAt: at(9), occurrence: 10 },
      { dueAt: at(8), occurrence: 9 },
    ]);
  });

  it('of a series accepted after its start are those it owed: none from before it was accepted', () => {
    // Published at minute 100 without a count: its cursor started there, and has passed three since.
    const late = { spec: everyMinute.spec, cursor: { after: at(102), fired: 3 } };
    expect(pastOccurrences(late, at(103), 5).map(({ dueAt, occurrence }) => [dueAt, occurrence])).toEqual([
      [at(102), 3],
      [at(101), 2],
      [at(100), 1],
    ]);
  });

  it('are found years back for a yearly series, in its zone', () => {
    const yearly = {
      spec: specOf('cron(0 9 1 1 ? *)', '2020-01-01T00:00:00Z', { timezone: 'Europe/Berlin' }),
      cursor: { after: Date.parse('2029-01-01T08:00:00Z'), fired: 10 },
    };
    const past = pastOccurrences(yearly, Date.parse('2029-06-01T00:00:00Z'), 5);
    expect(past.map(({ dueAt }) => new Date(dueAt).toISOString())).toEqual(
      [2029, 2028, 2027, 2026, 2025].map((year) => `${year}-01-01T08:00:00.000Z`),
    );
    expect(past.map(({ occurrence }) => occurrence)).toEqual([10, 9, 8, 7, 6]);
  });

  it('each go with the event it became: its state and lateness once emitted; no event, none', () => {
    const past = pastOccurrences(everyMinute, at(2.5), 3);
    const emitted = { id: occurrenceId('s-m-1', at(2)), state: EVENT_STATE.emitted, dueAt: at(2), emittedAt: at(2) + 180 };
    const failed = { id: occurrenceId('s-m-1', at(1)), state: EVENT_STATE.failed, dueAt: at(1) };
    const events = new Map([emitted, failed].map((record) => [record.id, record as EventRecord]));
    expect(pastOccurrenceOutcomes('s-m-1', past, events)).toEqual([
      {
        dueAt: at(2),
        occurrence: 3,
        eventId: emitted.id,
        event: { state: 'emitted', dueAt: at(2), emittedAt: at(2) + 180 },
        latenessMs: 180,
      },
      { dueAt: at(1), occurrence: 2, eventId: failed.id, event: { state: 'failed', dueAt: at(1), emittedAt: undefined } },
      { dueAt: at(0), occurrence: 1, eventId: occurrenceId('s-m-1', at(0)) },
    ]);
  });
});

describe('the last occurrences operators are shown of a series', () => {
  const everyMinute = { id: 's-m-1', spec: specOf('rate(1 minute)', '2030-03-18T00:00:00Z'), cursor: { after: at(9), fired: 10 } };

  it('go with their events, read in one batch of their ids; before the first has come, nothing is read', async () => {
    const reads: (readonly string[])[] = [];
    const emitted = { id: occurrenceId('s-m-1', at(1)), state: EVENT_STATE.emitted, dueAt: at(1), emittedAt: at(1) + 40 } as EventRecord;
    const listing = {
      events: async (ids: readonly string[]) => {
        reads.push(ids);
        return new Map([[emitted.id, emitted]]);
      },
    };
    const series = everyMinute as unknown as SeriesRecord;
    expect(await lastOccurrences(listing, series, at(1.5), 5)).toEqual([
      {
        dueAt: at(1),
        occurrence: 2,
        eventId: emitted.id,
        event: { state: 'emitted', dueAt: at(1), emittedAt: at(1) + 40 },
        latenessMs: 40,
      },
      { dueAt: at(0), occurrence: 1, eventId: occurrenceId('s-m-1', at(0)) },
    ]);
    expect(reads).toEqual([[occurrenceId('s-m-1', at(1)), occurrenceId('s-m-1', at(0))]]);
    expect(await lastOccurrences(listing, series, at(-1), 5)).toEqual([]);
    expect(reads, 'no read for a series none of whose occurrences has come').toHaveLength(1);
  });
});
