import { describe } from 'vitest';
import { eventStoreContract } from './contracts/event-store-contract.js';
import { MemoryEventStore, MemoryLabelledEvents, MemoryOpenEventsCounter, MemoryTenantPauses } from './memory-event-store.js';

/** The in-memory store the unit tests use, held to what the DynamoDB store does (see the contract). */
describe('the in-memory event store', () => {
  eventStoreContract((clock) => {
    const store = new MemoryEventStore(clock);
    return {
      store,
      pauses: new MemoryTenantPauses(store),
      counter: new MemoryOpenEventsCounter(store),
      labelled: new MemoryLabelledEvents(store),
    };
  });
});
