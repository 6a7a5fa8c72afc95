import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  controlRoom,
  fitting,
  FullQuotas,
  NO_QUOTA_COUNTS,
  OPEN_EVENTS_FULL_FOR_MS,
  quotaExceeded,
  quotaRoom,
  type QuotaCounts,
} from '../src/domain/quotas.js';
import { REASON } from '../src/domain/reasons.js';
import type { Quotas } from '../src/domain/tenants.js';

const QUOTAS = { maxOpenEvents: 10, maxIngestPerSecond: 4, maxControlPerSecond: 3 };
/** The start of a second. */
const SECOND = 1_900_000_000_000;
const counts = (overrides: Partial<QuotaCounts>): QuotaCounts => ({ ...NO_QUOTA_COUNTS, ...overrides });

describe('the room quotas leave', () => {
  it('is what the nearer quota to full leaves, and names it', () => {
    expect(quotaRoom(counts({ openEvents: 8 }), QUOTAS)).toEqual({ room: 2, quota: 'maxOpenEvents' });
    expect(quotaRoom(counts({ thisSecond: 3 }), QUOTAS)).toEqual({ room: 1, quota: 'maxIngestPerSecond' });
  });

  it('is never below nothing, however far past a quota a count is', () => {
    expect(quotaRoom(counts({ openEvents: 12 }), QUOTAS)).toEqual({ room: 0, quota: 'maxOpenEvents' });
    expect(controlRoom(counts({ controlsThisSecond: 7 }), QUOTAS)).toBe(0);
  });

  it('for control requests is their own: full event quotas take none of it, and used controls none of the events', () => {
    const eventsFull = counts({ openEvents: 10, thisSecond: 4, controlsThisSecond: 1 });
    expect(fitting({ events: 5, controls: 5 }, eventsFull, QUOTAS)).toEqual({ events: 0, controls: 2, quota: 'maxOpenEvents' });
    const controlsFull = counts({ openEvents: 2, controlsThisSecond: 3 });
    expect(fitting({ events: 5, controls: 5 }, controlsFull, QUOTAS)).toEqual({ events: 4, controls: 0, quota: 'maxIngestPerSecond' });
  });

  it('is none for a count that is no number, and no more than the quota for one below zero', () => {
    expect(fitting({ events: 5, controls: 5 }, counts({ openEvents: Number.NaN, controlsThisSecond: Number.NaN }), QUOTAS)).toMatchObject({
      events: 0,
      controls: 0,
    });
    expect(fitting({ events: 50, controls: 50 }, counts({ thisSecond: -100, controlsThisSecond: -100 }), QUOTAS)).toMatchObject({
      events: 4,
      controls: 3,
    });
  });
});

describe('what an ask is given, whatever the counts hold', () => {
  // Small quotas as often as large ones, so that counts near them are common.
  const limit = fc.oneof(fc.nat({ max: 100 }), fc.nat({ max: 2_000_000 }));
  const quotas = fc.record<Quotas>({ maxOpenEvents: limit, maxIngestPerSecond: limit, maxControlPerSecond: limit });
  // What a counter item may hold: sane counts, counts past a quota, below zero, fractions, huge, or no number at all.
  const count = fc.oneof(
    fc.nat({ max: 200 }),
    fc.integer(),
    fc.double({ min: -50, max: 150 }),
    fc.double(),
    fc.constantFrom(Number.MAX_SAFE_INTEGER, -1, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
  );
  const anyCounts = fc.record<QuotaCounts>({ openEvents: count, thisSecond: count, controlsThisSecond: count });
  const ask = fc.record({ events: fc.nat({ max: 200 }), controls: fc.nat({ max: 200 }) });

  it('is a whole number from none to what was asked, of each kind, and never past a quota a sane count leaves room in', () => {
    fc.assert(
      fc.property(ask, anyCounts, quotas, (asked, held, limits) => {
        const given = fitting(asked, held, limits);
        for (const kind of ['events', 'controls'] as const) {
          expect(Number.isInteger(given[kind])).toBe(true);
          expect(given[kind]).toBeGreaterThanOrEqual(0);
          expect(given[kind]).toBeLessThanOrEqual(asked[kind]);
        }
        expect(given.events).toBeLessThanOrEqual(Math.min(limits.maxOpenEvents, limits.maxIngestPerSecond));
        expect(given.controls).toBeLessThanOrEqual(limits.maxControlPerSecond);
        if (held.openEvents >= 0)
          expect(held.openEvents + given.events).toBeLessThanOrEqual(Math.max(held.openEvents, limits.maxOpenEvents));
        if (held.thisSecond >= 0)
          expect(held.thisSecond + given.events).toBeLessThanOrEqual(Math.max(held.thisSecond, limits.maxIngestPerSecond));
        if (held.controlsThisSecond >= 0)
          expect(held.controlsThisSecond + given.controls).toBeLessThanOrEqual(
            Math.max(held.controlsThisSecond, limits.maxControlPerSecond),
          );
      }),
    );
  });

  it('gives each kind all the room its own quota leaves: what the events hold never changes what the controls get', () => {
    const sane = fc.nat({ max: 200_000 });
    fc.assert(
      fc.property(ask, sane, sane, sane, anyCounts, quotas, (asked, openEvents, thisSecond, controlsThisSecond, other, limits) => {
        const given = fitting(asked, { openEvents, thisSecond, controlsThisSecond }, limits);
        expect(given.events).toBe(
          Math.max(0, Math.min(asked.events, limits.maxOpenEvents - openEvents, limits.maxIngestPerSecond - thisSecond)),
        );
        expect(given.controls).toBe(Math.max(0, Math.min(asked.controls, limits.maxControlPerSecond - controlsThisSecond)));
        // Whatever the event counts hold, the controls get the same; and the other way round.
        expect(fitting(asked, { ...other, controlsThisSecond }, limits).controls).toBe(given.controls);
        expect(fitting(asked, { ...other, openEvents, thisSecond }, limits).events).toBe(given.events);
      }),
    );
  });
});

describe('a refusal over a quota', () => {
  it('names the quota and its limit', () => {
    const error = quotaExceeded('acme', 'maxControlPerSecond', QUOTAS);
    expect(error.reason).toBe(REASON.QUOTA_EXCEEDED);
    expect(error.message).toBe('tenant "acme" is at its maxControlPerSecond quota (3)');
    expect(error.details).toEqual({ quota: 'maxControlPerSecond', limit: 3 });
  });
});

describe('quotas known to be full', () => {
  it('keep a used-up rate for the rest of its second only', () => {
    const full = new FullQuotas();
    full.note('acme', counts({ openEvents: 4, thisSecond: 4 }), QUOTAS, SECOND + 200);
    expect(full.at('acme', SECOND + 999)).toBe('maxIngestPerSecond');
    expect(full.at('acme', SECOND + 1_000)).toBeUndefined();
    expect(full.at('globex', SECOND + 500)).toBeUndefined();
  });

  it('keep full open events for a second from when the counter said so', () => {
    const full = new FullQuotas();
    full.note('acme', counts({ openEvents: 10, thisSecond: 1 }), QUOTAS, SECOND + 900);
    expect(full.at('acme', SECOND + 900 + OPEN_EVENTS_FULL_FOR_MS - 1)).toBe('maxOpenEvents');
    expect(full.at('acme', SECOND + 900 + OPEN_EVENTS_FULL_FOR_MS)).toBeUndefined();
  });

  it('say open events first when both are full, and nothing once the counter says there is room again', () => {
    const full = new FullQuotas();
    full.note('acme', counts({ openEvents: 10, thisSecond: 4 }), QUOTAS, SECOND);
    expect(full.at('acme', SECOND)).toBe('maxOpenEvents');
    full.note('acme', counts({ openEvents: 9, thisSecond: 3 }), QUOTAS, SECOND + 10);
    expect(full.at('acme', SECOND + 10)).toBeUndefined();
  });

  it('keep a used-up control rate for the rest of its second only, apart from the event quotas', () => {
    const full = new FullQuotas();
    full.note('acme', counts({ controlsThisSecond: 3 }), QUOTAS, SECOND + 200);
    expect(full.controlsFullAt('acme', SECOND + 999)).toBe(true);
    expect(full.at('acme', SECOND + 999)).toBeUndefined();
    expect(full.controlsFullAt('acme', SECOND + 1_000)).toBe(false);
    expect(full.controlsFullAt('globex', SECOND + 500)).toBe(false);
    full.note('globex', counts({ openEvents: 10, thisSecond: 4, controlsThisSecond: 2 }), QUOTAS, SECOND);
    expect(full.controlsFullAt('globex', SECOND)).toBe(false);
  });

  it('are forgotten when this process frees places, but for the control rate, which no freed place changes', () => {
    const full = new FullQuotas();
    full.note('acme', counts({ openEvents: 10, controlsThisSecond: 3 }), QUOTAS, SECOND);
    full.forget('acme');
    expect(full.at('acme', SECOND)).toBeUndefined();
    expect(full.controlsFullAt('acme', SECOND)).toBe(true);
    full.note('globex', counts({ openEvents: 10 }), QUOTAS, SECOND);
    full.forget('globex');
    expect(full.at('globex', SECOND)).toBeUndefined();
  });
});
