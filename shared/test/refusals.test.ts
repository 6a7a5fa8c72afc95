import { describe, expect, it } from 'vitest';
import { eventIdFor } from '../src/domain/event.js';
import { EventRejectedError, REASON } from '../src/domain/reasons.js';
import { REFUSALS_KEPT, refusalOf, refusalsToKeep } from '../src/domain/refusals.js';

const AT = 1_900_000_000_000;
const invalid = new EventRejectedError(REASON.INVALID_DATE, '"next tuesday" is not an ISO-8601 date-time');

describe('a refusal', () => {
  it('names the event a schedule request would have created: by its id, else by its MessageId', () => {
    const withId = refusalOf('acme', { input: { id: 'order-1', user: 'alice', date: 'x' }, inputMessageId: 'msg-1' }, invalid, AT);
    expect(withId).toEqual({
      tenant: 'acme',
      at: AT,
      reason: REASON.INVALID_DATE,
      message: invalid.message,
      inputMessageId: 'msg-1',
      action: 'schedule',
      eventId: eventIdFor('acme', 'alice', 'order-1', ''),
      clientId: 'order-1',
      user: 'alice',
    });
    const withoutId = refusalOf('acme', { input: { user: 'alice' }, inputMessageId: 'msg-2' }, invalid, AT);
    expect(withoutId.eventId).toBe('m-msg-2');
    expect(withoutId.clientId).toBeUndefined();
  });

  it("names the event a cancel or reschedule names, by event_id or id, and the store's id when it has one", () => {
    const byEventId = refusalOf('acme', { input: { action: 'cancel', event_id: 'c-123' }, inputMessageId: 'msg-1' }, invalid, AT);
    expect(byEventId).toMatchObject({ action: 'cancel', eventId: 'c-123', clientId: undefined });
    const byId = refusalOf('acme', { input: { action: 'reschedule', id: 'order-1' }, inputMessageId: 'msg-2' }, invalid, AT);
    expect(byId).toMatchObject({ action: 'reschedule', eventId: eventIdFor('acme', '', 'order-1', ''), clientId: 'order-1' });
    expect(refusalOf('acme', { input: {}, inputMessageId: 'msg-3' }, invalid, AT, 'c-known').eventId).toBe('c-known');
    // A pause names no event.
    expect(refusalOf('acme', { input: { action: 'pause' }, inputMessageId: 'msg-4' }, invalid, AT).eventId).toBeUndefined();
  });

  it('takes a text that is not JSON, or not an object, as a schedule request without fields', () => {
    for (const input of ['not json', [1, 2], null, 42])
      expect(refusalOf('acme', { input, inputMessageId: 'msg-1' }, invalid, AT)).toMatchObject({
        action: 'schedule',
        eventId: 'm-msg-1',
        clientId: undefined,
        user: undefined,
      });
  });

  it('keeps a bounded, well-formed quote of what the client wrote', () => {
    const long = new EventRejectedError(REASON.INVALID_FIELD, 'm'.repeat(10_000));
    const refusal = refusalOf(
      'acme',
      { input: { id: `${'i'.repeat(5_000)}\ud800`, user: 'u'.repeat(5_000) }, inputMessageId: 'msg-1' },
      long,
      AT,
    );
    expect(refusal.message).toHaveLength(403);
    expect(refusal.clientId).toHaveLength(131);
    expect(refusal.user).toHaveLength(131);
    expect(refusal.clientId?.isWellFormed()).toBe(true);
    // The event id is derived from the whole id, as ingest derives it.
    expect(refusal.eventId).toBe(eventIdFor('acme', 'u'.repeat(5_000), `${'i'.repeat(5_000)}\ud800`, ''));
  });
});

describe("a batch's refusals", () => {
  it('keeps the first few of each tenant and counts the rest, each tenant apart', () => {
    const refusal = (tenant: string, n: number) => refusalOf(tenant, { input: {}, inputMessageId: `${tenant}-${n}` }, invalid, AT + n);
    const flood = Array.from({ length: REFUSALS_KEPT.perTenantPerBatch + 5 }, (_, n) => refusal('acme', n));
    const kept = refusalsToKeep([refusal('globex', 0), ...flood, refusal('globex', 1)]);
    expect(kept.map(({ tenant, kept, notKept }) => ({ tenant, kept: kept.map((each) => each.inputMessageId), notKept }))).toEqual([
      { tenant: 'globex', kept: ['globex-0', 'globex-1'], notKept: 0 },
      {
        tenant: 'acme',
        kept: flood.slice(0, REFUSALS_KEPT.perTenantPerBatch).map((each) => each.inputMessageId),
        notKept: 5,
      },
    ]);
  });
});
