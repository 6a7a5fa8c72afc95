import { describe, expect, it } from 'vitest';
import type { LabelledEvents } from '../../src/app/ports/bulk-cancel.js';
import type { EventStore, HoldOutcome } from '../../src/app/ports/event-store.js';
import type { Clock } from '../../src/app/ports/process.js';
import type { OpenEventsCounter, TenantPauses } from '../../src/app/ports/tenants.js';
import { EVENT_STATE, requestFieldsDiffering, type EventRecord } from '../../src/domain/lifecycle.js';
import { CaseEvents, movableClock, NOW, type MovableClock } from './contract-events.js';

/**
 * What the application relies on of the event store, stated once and run against each store that
 * implements it: the DynamoDB store on DynamoDB Local (infra/test/local/event-store-contract.test.ts),
 * and the in-memory one the unit tests use (shared/test/memory-event-store.test.ts), which must not
 * drift from it. Outcomes are read through the ports only.
 */

/** A store and the ports that share its table: the pauses its holds check, its quota counter, its label entries. */
export interface StoreUnderContract {
  readonly store: EventStore;
  readonly pauses: TenantPauses;
  readonly counter: OpenEventsCounter;
  readonly labelled: LabelledEvents;
}

/** A store that checks changes' cutoffs against `clock`, empty of the tenants the cases use. */
export type StoreFactory = (clock: Clock) => StoreUnderContract | Promise<StoreUnderContract>;

/** One case's store, clock and events. */
export interface ContractCase extends StoreUnderContract {
  readonly clock: MovableClock;
  readonly e: CaseEvents;
  /** The record of the case's event `name`, read consistently. */
  record(name: string): Promise<EventRecord | undefined>;
  /** The emitter's hold of the case's near event `name`, from the copy its create sent. */
  holdCreated(name: string): Promise<HoldOutcome>;
  /** The case's tenant's open events, as its quota counter holds them. */
  openEvents(): Promise<number>;
}

/** That a record's fields hold no value (a store may leave such a field out, or hold it undefined). */
function expectUnset(record: EventRecord | undefined, ...fields: (keyof EventRecord)[]): void {
  expect(record).toBeDefined();
  expect(fields.filter((field) => record?.[field] !== undefined)).toEqual([]);
}

export function eventStoreContract(fresh: StoreFactory): void {
  const setup = async (): Promise<ContractCase> => {
    const clock = movableClock();
    const ports = await fresh(clock);
    const e = new CaseEvents();
    return {
      ...ports,
      clock,
      e,
      record: async (name) => (await ports.store.read([e.id(name)])).get(e.id(name)),
      openEvents: () => ports.counter.openEvents(e.tenant),
      holdCreated: async (name) => {
        const created = (await ports.store.read([e.id(name)])).get(e.id(name));
        if (created === undefined) throw new Error(`no event ${name} to hold`);
        return ports.store.hold(created, `token-${e.id(name)}`, e.hold(name));
      },
    };
  };
  describe('the event store contract: creating events', () => createCases(setup));
  describe('the event store contract: loading, ends and holds', () => takeAndEndCases(setup));
  describe('the event store contract: changes', () => changeCases(setup));
}

function createCases(setup: () => Promise<ContractCase>): void {
  it('creates a near event queued as its copy left it, its payload in that copy only, its place counted', async () => {
    const { store, e, record, openEvents } = await setup();
    expect(await store.createMany([e.newEvent(e.event('a'), 'near')])).toEqual([{ outcome: 'created' }]);
    expect(await record('a')).toMatchObject({
      id: e.id('a'),
      tenant: e.tenant,
      state: EVENT_STATE.queued,
      version: 1,
      dueAt: NOW + 3_600_000,
      payloadKept: 'queue',
      queuedBy: `token-${e.id('a')}`,
      inputMessageId: `input-${e.id('a')}`,
      createdAt: NOW,
      queuedAt: NOW,
      expiresAt: Math.ceil(NOW / 1000) + 3600,
    });
    expectUnset(await record('a'), 'payload');
    expect(await openEvents()).toBe(1);
  });

  it('creates a far event stored for the loader with its payload, small or large', async () => {
    const { store, e, record, openEvents } = await setup();
    const small = e.event('small');
    const large = e.event('large', { payload: 'x'.repeat(2_000) });
    expect(await store.createMany([e.newEvent(small, 'far'), e.newEvent(large, 'far')])).toEqual([
      { outcome: 'created' },
      { outcome: 'created' },
    ]);
    for (const [name, stored] of [
      ['small', small],
      ['large', large],
    ] as const) {
      const created = await record(name);
      expect(created).toMatchObject({ state: EVENT_STATE.scheduled, version: 1 });
      expectUnset(created, 'queuedBy', 'loadedBy');
      expect(created?.payloadKept).not.toBe('queue');
      expect(await store.storedPayload(created as EventRecord)).toBe(stored.payload);
    }
    expect(await openEvents()).toBe(2);
  });

  it('creates each id once: the same request again, or twice in a batch, is a duplicate beside the first record, not counted again', async () => {
    const { store, e, openEvents } = await setup();
    expect(await store.createMany([e.newEvent(e.event('a'), 'near'), e.newEvent(e.event('b'), 'far')])).toEqual([
      { outcome: 'created' },
      { outcome: 'created' },
    ]);
    const again = await store.createMany([
      e.newEvent(e.event('a'), 'near'),
      e.newEvent(e.event('c'), 'near'),
      e.newEvent(e.event('c'), 'near'),
    ]);
    expect(again.map(({ outcome }) => outcome)).toEqual(['duplicate', 'created', 'duplicate']);
    expect(again[0]).toMatchObject({ existing: { id: e.id('a'), state: EVENT_STATE.queued, queuedBy: `token-${e.id('a')}` } });
    expect(again[0]).not.toHaveProperty('placeKept');
    expect(await openEvents()).toBe(3);
  });

  it('keeps the first request with an id: another request with it is a duplicate showing the first, whose payload stays', async () => {
    const { store, e, record, openEvents } = await setup();
    // A payload the record holds itself shows when it differs; one kept apart (over a write unit) cannot.
    for (const [payload, differing] of [
      ['first', ['date', 'payload']],
      ['first '.repeat(400), ['date']],
    ] as const) {
      const name = `p${payload.length}`;
      const first = e.event(name, { payload });
      const second = e.event(name, { payload: `other ${payload}`, dueAt: NOW + 7_200_000 });
      await store.createMany([e.newEvent(first, 'far')]);
      const [duplicate] = await store.createMany([e.newEvent(second, 'far')]);
      expect(duplicate).toMatchObject({ outcome: 'duplicate', existing: { requestHash: e.newEvent(first, 'far').requestHash } });
      expect(requestFieldsDiffering((duplicate as { existing: EventRecord }).existing, second)).toEqual(differing);
      expect(await store.storedPayload((await record(name)) as EventRecord)).toBe(payload);
    }
    expect(await openEvents()).toBe(2);
  });

  it('refuses past the open-events quota: the first that fit are created, and a redelivered request is a duplicate, not refused', async () => {
    const { store, e, openEvents } = await setup();
    const quotas = e.quotas({ maxOpenEvents: 2 });
    const outcomes = await store.createMany(['a', 'b', 'c'].map((name) => e.newEvent(e.event(name), 'near', { quotas })));
    expect(outcomes).toEqual([{ outcome: 'created' }, { outcome: 'created' }, { outcome: 'quota-exceeded', quota: 'maxOpenEvents' }]);
    const again = await store.createMany(['a', 'd'].map((name) => e.newEvent(e.event(name), 'near', { quotas })));
    expect(again).toMatchObject([
      { outcome: 'duplicate', existing: { id: e.id('a') } },
      { outcome: 'quota-exceeded', quota: 'maxOpenEvents' },
    ]);
    expect(await openEvents()).toBe(2);
  });

  it('admits a batch by place: the first the quota has room for, a duplicate among them giving its place back', async () => {
    const { store, e, openEvents } = await setup();
    const quotas = e.quotas({ maxOpenEvents: 2 });
    await store.createMany([e.newEvent(e.event('a'), 'near', { quotas })]);
    const outcomes = await store.createMany(['a', 'b', 'c'].map((name) => e.newEvent(e.event(name), 'near', { quotas })));
    expect(outcomes.map(({ outcome }) => outcome)).toEqual(['duplicate', 'quota-exceeded', 'quota-exceeded']);
    expect(await openEvents()).toBe(1);
    expect(await store.createMany([e.newEvent(e.event('b'), 'near', { quotas })])).toEqual([{ outcome: 'created' }]);
  });

  it('refuses past the per-second quota, and creates again the next second', async () => {
    const { store, e, record, openEvents } = await setup();
    const quotas = e.quotas({ maxIngestPerSecond: 2 });
    const second = Math.floor(NOW / 1000) * 1000;
    const outcomes = await store.createMany(['a', 'b', 'c'].map((name) => e.newEvent(e.event(name), 'far', { quotas, now: second })));
    expect(outcomes).toEqual([{ outcome: 'created' }, { outcome: 'created' }, { outcome: 'quota-exceeded', quota: 'maxIngestPerSecond' }]);
    expect(await record('c')).toBeUndefined();
    expect(await store.createMany([e.newEvent(e.event('c'), 'far', { quotas, now: second + 1_000 })])).toEqual([{ outcome: 'created' }]);
    expect(await openEvents()).toBe(3);
  });

  it("holds places for a batch's events in one write, all or none; creates them on those places, a duplicate giving none back; settles the rest", async () => {
    const { store, e, openEvents } = await setup();
    const quotas = e.quotas({ maxOpenEvents: 5, maxIngestPerSecond: 4 });
    const second = Math.floor(NOW / 1000) * 1000;
    expect(await store.createMany([e.newEvent(e.event('a'), 'near', { quotas, now: second })])).toEqual([{ outcome: 'created' }]);
    // Five more do not fit the open events (1 + 5 > 5), nor four more this second (1 + 4 > 4): nothing held.
    expect(await store.holdPlaces(e.tenant, quotas, second, 5)).toBe(false);
    expect(await store.holdPlaces(e.tenant, quotas, second, 4)).toBe(false);
    expect(await openEvents()).toBe(1);
    expect(await store.holdPlaces(e.tenant, quotas, second, 3)).toBe(true);
    expect(await openEvents()).toBe(4);
    // On the places held: none taken for them, and a duplicate ('a') gives none back.
    const held = { quotas, now: second };
    const outcomes = await store.createMany(
      ['a', 'b', 'c'].map((name) => e.newEvent(e.event(name), 'near', held)),
      { placesHeld: true },
    );
    expect(outcomes.map(({ outcome }) => outcome)).toEqual(['duplicate', 'created', 'created']);
    expect(await openEvents()).toBe(4);
    // The holder gives back the place 'a' did not take, and frees one more (a series that ended).
    expect(await store.settlePlaces(e.tenant, { heldAt: second, unused: 1, freed: 1 })).toBe(true);
    expect(await openEvents()).toBe(2);
    // The place given back counts in its second again (a, b, c of 4): one more fits it, two do not.
    expect(await store.holdPlaces(e.tenant, quotas, second, 2)).toBe(false);
    expect(await store.holdPlaces(e.tenant, quotas, second, 1)).toBe(true);
    expect(await openEvents()).toBe(3);
  });

  it('counts control requests with the new events, each against its own quotas, and has room for them again the next second', async () => {
    const { store, e, openEvents } = await setup();
    const quotas = e.quotas({ maxOpenEvents: 1, maxControlPerSecond: 2 });
    const second = Math.floor(NOW / 1000) * 1000;
    const admission = (names: readonly string[], controls: number, now = second) => ({
      tenant: e.tenant,
      quotas,
      now,
      entries: names.map((name) => e.newEvent(e.event(name), 'far', { quotas, now })),
      controls,
    });
    expect(await store.admit(admission(['a', 'b'], 3))).toEqual({
      outcomes: [{ outcome: 'created' }, { outcome: 'quota-exceeded', quota: 'maxOpenEvents' }],
      controls: 2,
    });
    expect(await store.admit(admission([], 1))).toEqual({ outcomes: [], controls: 0 });
    // The open events are at their quota: the control requests of the next second are taken all the same.
    expect(await store.admit(admission(['c'], 2, second + 1_000))).toEqual({
      outcomes: [{ outcome: 'quota-exceeded', quota: 'maxOpenEvents' }],
      controls: 2,
    });
    expect(await openEvents()).toBe(1);
  });

  it("tells the last pause or resume the tenant's requests applied, an operator's left out", async () => {
    const { pauses, e } = await setup();
    expect(await pauses.lastChange(e.tenant)).toBeUndefined();
    await pauses.pause(e.tenant, e.asks('pause-1'), { pausedAt: NOW, note: undefined });
    await pauses.pause(e.tenant, { owner: 'operator', name: 'operator jo' }, { pausedAt: NOW, note: undefined });
    expect(await pauses.lastChange(e.tenant)).toBe('pause-1');
    await pauses.resume(e.tenant, e.asks('resume-1', NOW + 1), NOW + 1);
    // Published before the last one applied: not applied, and not the last.
    await pauses.pause(e.tenant, e.asks('pause-2', NOW - 1), { pausedAt: NOW, note: undefined });
    expect(await pauses.lastChange(e.tenant)).toBe('resume-1');
  });

  it('reads records by id, leaving out the ids without one', async () => {
    const { store, e } = await setup();
    await store.createMany([e.newEvent(e.event('a'), 'near')]);
    const read = await store.read([e.id('a'), e.id('missing')]);
    expect([...read.keys()]).toEqual([e.id('a')]);
    expect(read.get(e.id('a'))).toMatchObject({ id: e.id('a'), state: EVENT_STATE.queued });
  });

  it('sends a near event again only as its request placed it: not another request’s, not once a loader took it or it ended', async () => {
    const { store, e, record } = await setup();
    await store.createMany([e.newEvent(e.event('near'), 'near'), e.newEvent(e.event('far'), 'far')]);
    const requeue = { placedBy: `input-${e.id('near')}`, version: 1, queuedBy: 'copy-2', now: NOW };
    expect(await store.requeue(e.id('near'), { ...requeue, placedBy: 'input-other' })).toBe(false);
    expect(await store.requeue(e.id('near'), { ...requeue, version: 2 })).toBe(false);
    expect(await store.requeue(e.id('near'), requeue)).toBe(true);
    expect(await record('near')).toMatchObject({ state: EVENT_STATE.queued, queuedBy: 'copy-2', resentAt: NOW });
    await store.takeForLoading([e.id('far')], e.load('chunk-1', 'copy-1'));
    expect(await store.requeue(e.id('far'), { ...requeue, placedBy: `input-${e.id('far')}` })).toBe(false);
    await store.endEmissions([e.ending(e.event('near'), 'delivery-1')]);
    expect(await store.requeue(e.id('near'), { ...requeue, queuedBy: 'copy-3' })).toBe(false);
    expect(await record('far')).toMatchObject({ loadedBy: 'chunk-1', queuedBy: 'copy-1' });
  });

  it('lists a labelled event under each label from its create; another request with its id, or one over quota, lists nothing', async () => {
    const { store, e, labelled } = await setup();
    const page = (label: string) =>
      labelled.page({ tenant: e.tenant, label, fromMs: NOW, beforeMs: undefined, after: undefined, limit: 10 });
    const labels = e.event('a', { labels: ['billing', 'eu'] });
    expect(await store.createMany([e.newEvent(labels, 'far')])).toEqual([{ outcome: 'created' }]);
    expect(await page('billing')).toEqual([{ id: e.id('a'), dueAt: labels.dueAt }]);
    expect(await page('eu')).toEqual([{ id: e.id('a'), dueAt: labels.dueAt }]);
    expect(await store.createMany([e.newEvent(e.event('a', { labels: ['other'] }), 'far')])).toMatchObject([{ outcome: 'duplicate' }]);
    expect(await page('other')).toEqual([]);
    const full = e.quotas({ maxOpenEvents: 1 });
    expect(await store.createMany([e.newEvent(e.event('b', { labels: ['billing'] }), 'far', { quotas: full })])).toMatchObject([
      { outcome: 'quota-exceeded' },
    ]);
    expect(await page('billing')).toEqual([{ id: e.id('a'), dueAt: labels.dueAt }]);
  });
}

function takeAndEndCases(setup: () => Promise<ContractCase>): void {
  it('lets a loading chunk take a stored event due before its horizon once: another chunk gets nothing, the same chunk takes it again', async () => {
    const { store, e, record } = await setup();
    await store.createMany([e.newEvent(e.event('far'), 'far'), e.newEvent(e.event('later', { dueAt: NOW + 9_000_000 }), 'far')]);
    const ids = [e.id('far'), e.id('later')];
    expect(await store.takeForLoading(ids, e.load('chunk-1', 'copy-1'))).toEqual([e.event('far')]);
    expect(await store.takeForLoading(ids, e.load('chunk-2', 'copy-2'))).toEqual([]);
    expect(await store.takeForLoading(ids, e.load('chunk-1', 'copy-3'))).toHaveLength(1);
    expect(await record('far')).toMatchObject({ state: EVENT_STATE.queued, loadedBy: 'chunk-1', queuedBy: 'copy-3', loadedAt: NOW });
    expect(await record('later')).toMatchObject({ state: EVENT_STATE.scheduled });
    expectUnset(await record('later'), 'loadedBy');
  });

  it('repairs an overdue open event whoever took it, and leaves one that ended and one only its copy holds', async () => {
    const { store, e, record } = await setup();
    const due = NOW - 600_000;
    const names = ['stranded', 'emitted', 'near'];
    await store.createMany([
      e.newEvent(e.event('stranded', { dueAt: due }), 'far'),
      e.newEvent(e.event('emitted', { dueAt: due }), 'far'),
      e.newEvent(e.event('near', { dueAt: due }), 'near'),
    ]);
    const ids = names.map((name) => e.id(name));
    await store.takeForLoading(ids, e.load('lost-chunk', 'lost-copy', NOW));
    await store.endEmissions([e.ending(e.event('emitted', { dueAt: due }), 'delivery-1')]);
    const repair = { now: NOW, horizonMs: NOW, owner: 'sweep', queuedBy: 'copy-2', overdueBefore: NOW - 300_000 };
    const repaired = await store.takeForLoading(ids, repair);
    expect(repaired.map(({ id }) => id)).toEqual([e.id('stranded')]);
    expect(await record('stranded')).toMatchObject({ state: EVENT_STATE.queued, queuedBy: 'copy-2', sweptAt: NOW });
  });

  it('records an end once; a second delivery finds it ended, the same delivery retrying finds its own; places freed when released', async () => {
    const { store, e, record, openEvents } = await setup();
    await store.createMany([e.newEvent(e.event('a'), 'near'), e.newEvent(e.event('b'), 'near')]);
    const first = await store.endEmissions([e.ending(e.event('a'), 'delivery-1'), e.ending(e.event('b'), 'delivery-1')]);
    expect(first.recorded).toHaveLength(2);
    expect(first.applied).toHaveLength(2);
    expect(first.unknown).toEqual([]);
    expect(await openEvents()).toBe(2);
    expect(await store.releasePlaces(new Map([[e.tenant, first.applied.length]]))).toEqual([]);
    expect(await openEvents()).toBe(0);
    const second = await store.endEmissions([e.ending(e.event('a'), 'delivery-2'), e.ending(e.event('b'), 'delivery-1')]);
    expect(second.alreadyEnded.map(({ event: { id } }) => id)).toEqual([e.id('a')]);
    expect(second.recorded.map(({ event: { id } }) => id)).toEqual([e.id('b')]);
    // Neither applied here: an own end found later may have freed its place already.
    expect(second.applied).toEqual([]);
    expect(await openEvents()).toBe(0);
    expect(await record('a')).toMatchObject({
      state: EVENT_STATE.emitted,
      emittedAt: NOW,
      endedBy: 'delivery-1',
      expiresAt: Math.ceil(NOW / 1000) + 7200,
    });
  });

  it('records a failed end with its reason, and finds an end of a version a reschedule replaced, or of no record, ended already', async () => {
    const { store, e, record } = await setup();
    await store.createMany([e.newEvent(e.event('failing'), 'near'), e.newEvent(e.event('moved'), 'far')]);
    await store.reschedule(e.id('moved'), e.changes, e.moveTo(NOW + 7_200_000, 'r-1', { placement: { state: 'queued', shard: 0 } }));
    const ends = await store.endEmissions([
      e.ending(e.event('failing'), 'delivery-1', { state: 'failed', at: NOW, reason: 'TARGET_NOT_FOUND' }),
      e.ending(e.event('moved'), 'delivery-1'),
      e.ending(e.event('missing'), 'delivery-1'),
    ]);
    expect(ends.applied.map(({ event: { id } }) => id)).toEqual([e.id('failing')]);
    expect(ends.alreadyEnded.map(({ event: { id } }) => id)).toEqual([e.id('moved'), e.id('missing')]);
    expect(await record('failing')).toMatchObject({ state: EVENT_STATE.failed, failedAt: NOW, reason: 'TARGET_NOT_FOUND' });
    expect(await record('moved')).toMatchObject({ state: EVENT_STATE.queued, version: 2 });
  });

  it('holds a queued event of a paused tenant once, from the copy that holds it, and none of a tenant not paused', async () => {
    const { store, pauses, e, record } = await setup();
    await store.createMany([e.newEvent(e.event('a'), 'near')]);
    const queued = (await record('a')) as EventRecord;
    const from = `token-${e.id('a')}`;
    const hold = e.hold('a');
    expect(await store.hold(queued, from, hold)).toBe('not-paused');
    expect(await pauses.pause(e.tenant, e.asks('pause-1'), { pausedAt: NOW, note: undefined })).toBe(true);
    expect(await store.hold(queued, 'stale-copy', hold)).toBe('changed');
    expect(await store.hold({ ...queued, version: 2 }, from, hold)).toBe('changed');
    expect(await store.hold(queued, from, hold)).toBe('held');
    expect(await store.hold(queued, from, hold)).toBe('changed');
    const held = (await record('a')) as EventRecord;
    expect(held).toMatchObject({ state: EVENT_STATE.held, heldAt: NOW });
    expectUnset(held, 'queuedBy', 'loadedBy');
    expect(held.expiresAt).toBeNaN();
    expect(await store.storedPayload(held)).toBe('payload of a');
  });

  it("holds an event while its operator's pause lasts, and none once the pause has ended", async () => {
    const { store, pauses, e, holdCreated } = await setup();
    await store.createMany([e.newEvent(e.event('a'), 'near'), e.newEvent(e.event('b'), 'near')]);
    const operator = { owner: 'operator', name: 'operator jo' } as const;
    await pauses.pause(e.tenant, operator, { pausedAt: NOW, note: 'flood' });
    expect(await holdCreated('a')).toBe('held');
    await pauses.resume(e.tenant, operator, NOW + 1);
    expect(await holdCreated('b')).toBe('not-paused');
  });

  it('resumes a held event whatever its due time: out of the hold with an expiry, taken again by the same resume only', async () => {
    const { store, pauses, e, record, holdCreated } = await setup();
    await store.createMany([e.newEvent(e.event('a', { dueAt: NOW - 600_000 }), 'near')]);
    await pauses.pause(e.tenant, e.asks('pause-1'), { pausedAt: NOW, note: undefined });
    await holdCreated('a');
    const resume = { ...e.resume('resume-1', 'copy-2'), now: NOW + 1 };
    expect(await store.takeForLoading([e.id('a')], resume)).toEqual([e.event('a', { dueAt: NOW - 600_000 })]);
    expect(await record('a')).toMatchObject({
      state: EVENT_STATE.queued,
      resumedAt: NOW + 1,
      loadedBy: 'resume-1',
      queuedBy: 'copy-2',
      expiresAt: Math.ceil(NOW / 1000) + 3600,
    });
    expect(await store.takeForLoading([e.id('a')], { ...resume, owner: 'resume-2', queuedBy: 'copy-3' })).toEqual([]);
    expect(await store.takeForLoading([e.id('a')], { ...resume, queuedBy: 'copy-4' })).toHaveLength(1);
    // A loader's take is no resume: it leaves a held event where it is.
    await store.createMany([e.newEvent(e.event('b', { dueAt: NOW - 600_000 }), 'near')]);
    await holdCreated('b');
    expect(await store.takeForLoading([e.id('b')], e.load('chunk-1', 'copy-1'))).toEqual([]);
  });
}

function changeCases(setup: () => Promise<ContractCase>): void {
  it('cancels and frees the place at once; the same cancel again is refused, showing its own work', async () => {
    const { store, e, record, openEvents, clock } = await setup();
    await store.createMany([e.newEvent(e.event('a'), 'far')]);
    clock.at = NOW + 1;
    expect(await store.cancel(e.id('a'), e.changes, e.cancelBy('cancel-1'))).toEqual({ outcome: 'cancelled' });
    expect(await openEvents()).toBe(0);
    expect(await store.cancel(e.id('a'), e.changes, e.cancelBy('cancel-1'))).toMatchObject({
      outcome: 'refused',
      current: { state: EVENT_STATE.cancelled, cancelledBy: 'cancel-1' },
    });
    expect(await record('a')).toMatchObject({ cancelledAt: NOW + 1, expiresAt: Math.ceil(NOW / 1000) + 60 });
    expect(await openEvents()).toBe(0);
  });

  it("refuses a change of another tenant's event, of one that ended, and of one due within the cutoff as the clock then says", async () => {
    const { store, e, openEvents, clock } = await setup();
    await store.createMany([e.newEvent(e.event('a', { dueAt: NOW + 10_000 }), 'far'), e.newEvent(e.event('ended'), 'near')]);
    await store.endEmissions([e.ending(e.event('ended'), 'delivery-1')]);
    const theirs = { tenant: `${e.tenant}-other`, cutoffMs: 5_000 };
    expect(await store.cancel(e.id('a'), theirs, e.cancelBy('c-1'))).toMatchObject({
      outcome: 'refused',
      current: { state: EVENT_STATE.scheduled, tenant: e.tenant },
    });
    expect(await openEvents()).toBe(2);
    expect(await store.reschedule(e.id('a'), theirs, e.moveTo(NOW + 7_200_000, 'r-1'))).toMatchObject({ outcome: 'refused' });
    expect(await store.cancel(e.id('ended'), e.changes, e.cancelBy('c-2'))).toMatchObject({
      outcome: 'refused',
      current: { state: EVENT_STATE.emitted },
    });
    expect(await store.cancel(e.id('nothing'), e.changes, e.cancelBy('c-3'))).toEqual({ outcome: 'refused', current: undefined });
    // Due in 10 s, changes closing 5 s before: open until the clock passes NOW + 5 s.
    clock.at = NOW + 6_000;
    expect(await store.cancel(e.id('a'), e.changes, e.cancelBy('c-4'))).toMatchObject({
      outcome: 'refused',
      current: { state: EVENT_STATE.scheduled },
    });
    expect(await store.reschedule(e.id('a'), e.changes, e.moveTo(NOW + 7_200_000, 'r-2'))).toMatchObject({ outcome: 'refused' });
    clock.at = NOW + 4_000;
    expect(await store.cancel(e.id('a'), e.changes, e.cancelBy('c-5'))).toEqual({ outcome: 'cancelled' });
    expect(await openEvents()).toBe(1);
  });

  it('cancels a held event however overdue', async () => {
    const { store, pauses, e, openEvents, holdCreated } = await setup();
    await store.createMany([e.newEvent(e.event('a', { dueAt: NOW - 600_000 }), 'near')]);
    await pauses.pause(e.tenant, e.asks('pause-1'), { pausedAt: NOW, note: undefined });
    expect(await holdCreated('a')).toBe('held');
    expect(await store.cancel(e.id('a'), e.changes, e.cancelBy('cancel-1'))).toEqual({ outcome: 'cancelled' });
    expect(await openEvents()).toBe(0);
    expect(await store.takeForLoading([e.id('a')], e.resume('resume-1', 'copy-2'))).toEqual([]);
  });

  it('applies a reschedule once, and never one published before the last applied', async () => {
    const { store, e, record, clock } = await setup();
    await store.createMany([e.newEvent(e.event('a'), 'far')]);
    clock.at = NOW + 1;
    const to = (dueAt: number, by: string, publishedAt: number) => e.moveTo(dueAt, by, { publishedAt });
    expect(await store.reschedule(e.id('a'), e.changes, to(NOW + 7_200_000, 'r-1', NOW - 2))).toEqual({
      outcome: 'rescheduled',
      event: e.event('a', { version: 2, dueAt: NOW + 7_200_000 }),
    });
    expect(await store.reschedule(e.id('a'), e.changes, to(NOW + 9_000_000, 'r-2', NOW - 1))).toMatchObject({
      outcome: 'rescheduled',
      event: { version: 3 },
    });
    expect((await store.reschedule(e.id('a'), e.changes, to(NOW + 9_000_000, 'r-2', NOW - 1))).outcome).toBe('refused');
    expect((await store.reschedule(e.id('a'), e.changes, to(NOW + 7_200_000, 'r-1', NOW - 2))).outcome).toBe('refused');
    expect(await record('a')).toMatchObject({
      state: EVENT_STATE.scheduled,
      version: 3,
      dueAt: NOW + 9_000_000,
      lastChangeBy: 'r-2',
      lastChangeAt: NOW - 1,
      rescheduledAt: NOW + 1,
      expiresAt: Math.ceil((NOW + 9_000_000) / 1000) + 60,
    });
  });

  it('reschedules a held event out of the hold, placed anew with its payload', async () => {
    const { store, pauses, e, record, holdCreated } = await setup();
    await store.createMany([e.newEvent(e.event('a', { dueAt: NOW - 600_000 }), 'near')]);
    await pauses.pause(e.tenant, e.asks('pause-1'), { pausedAt: NOW, note: undefined });
    await holdCreated('a');
    expect(await store.reschedule(e.id('a'), e.changes, e.moveTo(NOW + 7_200_000, 'r-1'))).toEqual({
      outcome: 'rescheduled',
      event: e.event('a', { version: 2, dueAt: NOW + 7_200_000 }),
    });
    expect(await record('a')).toMatchObject({
      state: EVENT_STATE.scheduled,
      version: 2,
      expiresAt: Math.ceil((NOW + 7_200_000) / 1000) + 60,
    });
    expect(await store.takeForLoading([e.id('a')], e.resume('resume-1', 'copy-2'))).toEqual([]);
    expect(await store.takeForLoading([e.id('a')], e.load('chunk-1', 'copy-1', NOW + 9_000_000))).toHaveLength(1);
  });

  it('places a rescheduled stored event anew: in the delay queue as its new copy, which its request may send again', async () => {
    const { store, e, record } = await setup();
    await store.createMany([e.newEvent(e.event('a'), 'far')]);
    await store.takeForLoading([e.id('a')], e.load('chunk-1', 'copy-1'));
    const moved = e.moveTo(NOW + 60_000, 'r-1', { placement: { state: EVENT_STATE.queued, shard: 0 }, queuedBy: 'copy-2' });
    expect(await store.reschedule(e.id('a'), e.changes, moved)).toMatchObject({ outcome: 'rescheduled', event: { version: 2 } });
    expect(await record('a')).toMatchObject({ state: EVENT_STATE.queued, queuedBy: 'copy-2' });
    expectUnset(await record('a'), 'loadedBy');
    expect(await store.requeue(e.id('a'), { placedBy: 'r-1', version: 2, queuedBy: 'copy-3', now: NOW })).toBe(true);
    // Into the table again: the loader takes it anew.
    expect(await store.reschedule(e.id('a'), e.changes, e.moveTo(NOW + 7_000_000, 'r-2', { publishedAt: NOW + 1 }))).toMatchObject({
      outcome: 'rescheduled',
    });
    expect(await record('a')).toMatchObject({ state: EVENT_STATE.scheduled, version: 3 });
    expectUnset(await record('a'), 'queuedBy');
    expect(await store.takeForLoading([e.id('a')], e.load('chunk-2', 'copy-4'))).toHaveLength(1);
  });

  it('reschedules a near event in its record only, and carries it on once, from the copy the reschedule found', async () => {
    const { store, e, record } = await setup();
    await store.createMany([e.newEvent(e.event('a'), 'near')]);
    const token = `token-${e.id('a')}`;
    const rescheduled = await store.reschedule(
      e.id('a'),
      e.changes,
      e.moveTo(NOW + 7_200_000, 'r-1', { placement: { state: EVENT_STATE.queued, shard: 0 }, expiresAt: Math.ceil(NOW / 1000) + 9_000 }),
    );
    expect(rescheduled).toEqual({ outcome: 'rescheduled', event: undefined });
    expect(await record('a')).toMatchObject({ version: 2, carriedBy: token });
    // Moved again before the emitter saw it: the copy it names stays the first one.
    expect(await store.reschedule(e.id('a'), e.changes, e.moveTo(NOW + 7_300_000, 'r-2', { publishedAt: NOW + 1 }))).toEqual({
      outcome: 'rescheduled',
      event: undefined,
    });
    const moved = (await record('a')) as EventRecord;
    expect(moved).toMatchObject({ state: EVENT_STATE.queued, version: 3, carriedBy: token, queuedBy: token, dueAt: NOW + 7_300_000 });
    // A redelivery of its create does not send it again: the emitter carries it.
    expect(await store.requeue(e.id('a'), { placedBy: `input-${e.id('a')}`, version: 1, queuedBy: 'copy-x', now: NOW })).toBe(false);
    expect(await store.carry(moved, 'stale-copy', { to: 'queue', queuedBy: 'copy-2' }, NOW)).toBe(false);
    expect(await store.carry({ ...moved, version: 2 }, token, { to: 'queue', queuedBy: 'copy-2' }, NOW)).toBe(false);
    expect(await store.carry(moved, token, { to: 'queue', queuedBy: 'copy-2' }, NOW)).toBe(true);
    expect(await store.carry(moved, token, { to: 'queue', queuedBy: 'copy-3' }, NOW)).toBe(false);
    expect(await record('a')).toMatchObject({ state: EVENT_STATE.queued, queuedBy: 'copy-2', carriedAt: NOW });
    expectUnset(await record('a'), 'carriedBy');
  });

  it('carries a rescheduled near event into the table, for the loader to take with its payload', async () => {
    const { store, e, record } = await setup();
    await store.createMany([e.newEvent(e.event('a'), 'near')]);
    await store.reschedule(e.id('a'), e.changes, e.moveTo(NOW + 7_200_000, 'r-1'));
    const moved = (await record('a')) as EventRecord;
    const onward = { to: 'table', payload: 'payload of a', tenantShard: `${e.tenant}#s0` } as const;
    expect(await store.carry(moved, `token-${e.id('a')}`, onward, NOW)).toBe(true);
    const stored = (await record('a')) as EventRecord;
    expect(stored).toMatchObject({ state: EVENT_STATE.scheduled, carriedToTableAt: NOW });
    expectUnset(stored, 'carriedBy', 'queuedBy');
    expect(await store.storedPayload(stored)).toBe('payload of a');
    const taken = await store.takeForLoading([e.id('a')], e.load('chunk-1', 'copy-1', NOW + 9_000_000));
    expect(taken).toEqual([e.event('a', { version: 2, dueAt: NOW + 7_200_000 })]);
  });

  it("moves a rescheduled event's label entries with it", async () => {
    const { store, e, labelled } = await setup();
    await store.createMany([e.newEvent(e.event('a', { labels: ['billing'] }), 'far')]);
    expect((await store.reschedule(e.id('a'), e.changes, e.moveTo(NOW + 7_200_000, 'r-1'))).outcome).toBe('rescheduled');
    const page = await labelled.page({ tenant: e.tenant, label: 'billing', fromMs: NOW, beforeMs: undefined, after: undefined, limit: 10 });
    expect(page).toEqual([{ id: e.id('a'), dueAt: NOW + 7_200_000 }]);
  });
}
