import { describe, expect, it } from 'vitest';
import { reconcileOpenEvents } from '../src/app/quota-reconcile.js';
import { EVENT_STATE, type EventState } from '../src/domain/lifecycle.js';
import { storedRecord } from './factories.js';
import { MemoryEventListing, MemoryEventStore, MemoryOpenEventsCounter } from './memory-event-store.js';

const NOW = 1_900_000_000_000;

function setup() {
  const store = new MemoryEventStore();
  const counter = new MemoryOpenEventsCounter(store);
  const census = new MemoryEventListing(store);
  /** Stores an event of acme in `state`. */
  const event = (id: string, state: EventState = EVENT_STATE.scheduled) => store.put({ ...storedRecord(id, NOW + 60_000), state });
  return { store, counter, census, event };
}

describe("reconciling a tenant's open-events counter", () => {
  it('corrects the counter by the difference from the count of open events, and says the correction is exact when nothing moved', async () => {
    const { store, counter, census, event } = setup();
    event('a');
    event('b', EVENT_STATE.queued);
    event('c', EVENT_STATE.held);
    event('ended', EVENT_STATE.emitted);
    // Two places taken and never given back.
    store.openEvents.set('acme', 5);
    expect(await reconcileOpenEvents({ counter, census }, 'acme')).toEqual({
      tenant: 'acme',
      counted: 3,
      counterBefore: 5,
      counterAfter: 5,
      correction: -2,
      exact: true,
    });
    expect(store.openEvents.get('acme')).toBe(3);
    expect(counter.corrections).toEqual([{ tenant: 'acme', delta: -2 }]);
  });

  it('writes nothing to a counter that is right', async () => {
    const { store, counter, census, event } = setup();
    event('a');
    store.openEvents.set('acme', 1);
    expect(await reconcileOpenEvents({ counter, census }, 'acme')).toMatchObject({ correction: 0, exact: true });
    expect(counter.corrections).toEqual([]);
  });

  it('corrects against the middle of the counter before and after when events start during the count, and says it is not exact', async () => {
    const { store, counter, census, event } = setup();
    for (const id of ['a', 'b', 'c', 'd']) event(id);
    store.openEvents.set('acme', 6);
    // Two events start while the count runs; it finds one of them.
    const moving = {
      countOpen: async (tenant: string) => {
        event('e');
        const counted = await census.countOpen(tenant);
        event('f');
        store.openEvents.set('acme', 8);
        return counted;
      },
    };
    expect(await reconcileOpenEvents({ counter, census: moving }, 'acme')).toEqual({
      tenant: 'acme',
      counted: 5,
      counterBefore: 6,
      counterAfter: 8,
      correction: -2,
      exact: false,
    });
    // Off by at most what moved: 6 open events now.
    expect(store.openEvents.get('acme')).toBe(6);
  });
});
