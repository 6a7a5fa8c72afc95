import { SERIES_OCCURRENCES_NOTE, UNINDEXED_QUEUED_EVENTS_NOTE } from '@adhoc-scheduler/shared';
import { describe, expect, it } from 'vitest';
import type { EventPage, Overview } from '../../src/console/backend.js';
import { eventsView, type EventsQuery, overviewView } from '../../src/console/views.js';

/** What the console's events listing and overview say they leave out, in either setting. */
const context = { description: 'a test', token: 'token' };
const query: EventsQuery = { tenant: 'acme', label: undefined, state: 'open', from: undefined, to: undefined, after: undefined };
const page = (listsQueuedEvents: boolean): EventPage => ({ events: [], next: undefined, listsQueuedEvents });

describe('the notes of the events listing and the overview', () => {
  it("says a listing without a label leaves a series' occurrences to their series, whenever it may, in either setting", () => {
    const open = eventsView(context, query, page(true), undefined);
    expect(open).toContain(SERIES_OCCURRENCES_NOTE);
    expect(open).not.toContain(UNINDEXED_QUEUED_EVENTS_NOTE);
    const lean = eventsView(context, query, page(false), undefined);
    expect(lean).toContain(SERIES_OCCURRENCES_NOTE);
    expect(lean).toContain(UNINDEXED_QUEUED_EVENTS_NOTE);
    for (const state of ['emitted', 'cancelled', 'any'] as const)
      expect(eventsView(context, { ...query, state }, page(true), undefined)).toContain(SERIES_OCCURRENCES_NOTE);
    // Failed and held occurrences are listed; a label's listing has their label entries.
    for (const state of ['failed', 'held'] as const)
      expect(eventsView(context, { ...query, state }, page(true), undefined)).not.toContain(SERIES_OCCURRENCES_NOTE);
    expect(eventsView(context, { ...query, label: 'reports' }, page(true), undefined)).not.toContain(SERIES_OCCURRENCES_NOTE);
  });

  it("says the overview's timeline of open events leaves them out", () => {
    const overview: Overview = {
      tenant: {
        id: 'acme',
        enabled: true,
        maxOpenEvents: 100,
        maxIngestPerSecond: 10,
        maxControlPerSecond: 10,
        openEvents: 0,
        pause: { paused: false },
      },
      dueNextHour: [],
      emittedLastHour: 0,
      failedLastHour: 0,
      lateness: [],
      complete: true,
      listsQueuedEvents: true,
    };
    expect(overviewView(context, overview)).toContain(SERIES_OCCURRENCES_NOTE);
  });
});
