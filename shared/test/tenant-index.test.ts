import { describe, expect, it } from 'vitest';
import { EVENT_STATE, OPEN_STATES } from '../src/domain/lifecycle.js';
import { listingLeavesOutOccurrences, tenantIndexKeyAt } from '../src/domain/tenant-index.js';

/** Which write gives an event's record its tenant-index key (see tenantIndexKeyAt), in both settings of SCHEDULER_INDEX_QUEUED_EVENTS. */
describe('the tenant-index key a write gives a record', () => {
  const oneOff = { tenant: 'acme', shard: 3, payloadIn: 'queue' } as const;
  const occurrence = { ...oneOff, occurrence: true };

  it('lists a near-path event from its creation with the setting on, and only once it fails or is carried with it off', () => {
    expect(tenantIndexKeyAt('created', oneOff, true)).toBe('acme#q3');
    expect(tenantIndexKeyAt('created', oneOff, false)).toBeUndefined();
    expect(tenantIndexKeyAt('failed', oneOff, false)).toBe('acme#q3');
    expect(tenantIndexKeyAt('carried', oneOff, false)).toBe('acme#s3');
    expect(tenantIndexKeyAt('created', { ...oneOff, payloadIn: 'table' }, false)).toBe('acme#s3');
  });

  it('gives an occurrence of a series no key of its own at its creation, in either setting: it is listed with its series', () => {
    expect(tenantIndexKeyAt('created', occurrence, true)).toBeUndefined();
    expect(tenantIndexKeyAt('created', occurrence, false)).toBeUndefined();
    // Once it fails or is carried into the table, it is listed as any event is.
    expect(tenantIndexKeyAt('failed', occurrence, true)).toBe('acme#q3');
    expect(tenantIndexKeyAt('carried', occurrence, true)).toBe('acme#s3');
  });

  it('says which listings may leave occurrences out: those of queued, emitted or cancelled events', () => {
    expect(listingLeavesOutOccurrences(OPEN_STATES)).toBe(true);
    expect(listingLeavesOutOccurrences([EVENT_STATE.emitted])).toBe(true);
    expect(listingLeavesOutOccurrences([EVENT_STATE.cancelled])).toBe(true);
    expect(listingLeavesOutOccurrences([EVENT_STATE.failed, EVENT_STATE.held, EVENT_STATE.scheduled])).toBe(false);
  });
});
