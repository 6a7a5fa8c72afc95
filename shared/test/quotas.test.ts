import { describe, expect, it } from 'vitest';
import { FullQuotas, OPEN_EVENTS_FULL_FOR_MS, quotaRoom } from '../src/domain/quotas.js';

const QUOTAS = { maxOpenEvents: 10, maxIngestPerSecond: 4 };
/** The start of a second. */
const SECOND = 1_900_000_000_000;

describe('the room quotas leave', () => {
  it('is what the nearer quota to full leaves, and names it', () => {
    expect(quotaRoom({ openEvents: 8, thisSecond: 0 }, QUOTAS)).toEqual({ room: 2, quota: 'maxOpenEvents' });
    expect(quotaRoom({ openEvents: 0, thisSecond: 3 }, QUOTAS)).toEqual({ room: 1, quota: 'maxIngestPerSecond' });
  });

  it('is never below nothing, however far past a quota a count is', () => {
    expect(quotaRoom({ openEvents: 12, thisSecond: 0 }, QUOTAS)).toEqual({ room: 0, quota: 'maxOpenEvents' });
  });
});

describe('quotas known to be full', () => {
  it('keep a used-up rate for the rest of its second only', () => {
    const full = new FullQuotas();
    full.note('acme', { openEvents: 4, thisSecond: 4 }, QUOTAS, SECOND + 200);
    expect(full.at('acme', SECOND + 999)).toBe('maxIngestPerSecond');
    expect(full.at('acme', SECOND + 1_000)).toBeUndefined();
    expect(full.at('globex', SECOND + 500)).toBeUndefined();
  });

  it('keep full open events for a second from when the counter said so', () => {
    const full = new FullQuotas();
    full.note('acme', { openEvents: 10, thisSecond: 1 }, QUOTAS, SECOND + 900);
    expect(full.at('acme', SECOND + 900 + OPEN_EVENTS_FULL_FOR_MS - 1)).toBe('maxOpenEvents');
    expect(full.at('acme', SECOND + 900 + OPEN_EVENTS_FULL_FOR_MS)).toBeUndefined();
  });

  it('say open events first when both are full, and nothing once the counter says there is room again', () => {
    const full = new FullQuotas();
    full.note('acme', { openEvents: 10, thisSecond: 4 }, QUOTAS, SECOND);
    expect(full.at('acme', SECOND)).toBe('maxOpenEvents');
    full.note('acme', { openEvents: 9, thisSecond: 3 }, QUOTAS, SECOND + 10);
    expect(full.at('acme', SECOND + 10)).toBeUndefined();
  });

  it('are forgotten when this process frees places', () => {
    const full = new FullQuotas();
    full.note('acme', { openEvents: 10, thisSecond: 0 }, QUOTAS, SECOND);
    full.forget('acme');
    expect(full.at('acme', SECOND)).toBeUndefined();
  });
});
