import { randomUUID } from 'node:crypto';
import type { SchedulerConfig } from '../config.js';
import { delaySecondsFor } from '../domain/delay.js';
import { expiresAtFor, requestHashOf, type ScheduledEvent } from '../domain/event.js';
import { failureNotice, requestQuote } from '../domain/failure.js';
import { EVENT_STATE, placedOnDelayQueueBy } from '../domain/lifecycle.js';
import { REASON, TransientError } from '../domain/reasons.js';
import {
  type Materialisation,
  materialisation,
  materialisedAfter,
  retakeDelayMs,
  type NewSeries,
  type Occurrence,
  occurrenceEvent,
  SERIES_STATE,
  seriesTakeId,
  type SeriesRecord,
} from '../domain/series.js';
import type { Tenant } from '../domain/tenants.js';
import { shardOf } from '../domain/sharding.js';
import { noticeId, occurrenceId } from '../domain/table-keys.js';
import { reportFailure } from './failures.js';
import { yieldToOtherWork } from './yield.js';
import type { ChangeRequest, EventStore, NewEvent, PlacesSettled } from './ports/event-store.js';
import type { Clock, Logger, SchedulerMetrics } from './ports/process.js';
import type { DelayQueue } from './ports/queues.js';
import type { SeriesStore } from './ports/series-store.js';
import type { TenantDirectory } from './ports/tenants.js';
import { lookUpTenant } from './batch-tenants.js';

/**
 * A series' takes: each materialises the occurrences due within the near-path window as events
 * (created as ingest creates a near-path event, and sent to the delay queue), then moves the
 * series past them with one write on the version it read. Ingest takes a new series at once;
 * loading takes one the loader handed out. A cancel of the series cancels its record and the
 * occurrences it materialised that are not yet due.
 */

export interface SeriesDeps {
  readonly config: Pick<
    SchedulerConfig,
    'nearPathWindowSeconds' | 'loaderLookaheadSeconds' | 'shardCount' | 'retentionSeconds' | 'emitterLeadMs'
  >;
  readonly tenants: TenantDirectory;
  readonly store: Pick<EventStore, 'createMany' | 'requeue' | 'holdPlaces' | 'settlePlaces'>;
  readonly series: Pick<SeriesStore, 'payload' | 'advance'>;
  readonly delayQueue: Pick<DelayQueue, 'send' | 'sendNotice'>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
  readonly newToken?: () => string;
}

/** What a take did: the occurrences it sent, those it skipped, and whether it moved the series (false: another take had). */
export interface TakeResult {
  readonly sent: number;
  readonly skipped: number;
  readonly advanced: boolean;
}

/**
 * Takes an active series at `now`: its occurrences due before `now + nearPathWindow` become
 * events, each created with a conditional insert (a repeated take creates none twice, and sends
 * again only those still queued as its own version left them), sent to the delay queue with its
 * delay; those past the catch-up window are reported once as OCCURRENCE_SKIPPED; then the series
 * moves on (its cursor, its `dueAt`, its version), or ends. A failed step throws TransientError
 * before the series moves, so the take is made again (by the input message's or the chunk's
 * redelivery, or the loader's sweep), and finds its own work done.
 */
export async function takeSeries(
  deps: SeriesDeps,
  series: SeriesRecord,
  now: number,
  held?: HeldPlaces,
  planned?: Materialisation,
): Promise<TakeResult> {
  const { config } = deps;
  const tenant = await lookUpTenant(deps.tenants, series.tenant, [series.target, series.failureTopic]);
  if (tenant === undefined) {
    // Its tenant was removed: nothing is materialised (the emitter would refuse it), and the series stays where it is.
    deps.logger.warn({ seriesId: series.id, tenant: series.tenant }, 'series of a tenant no longer registered; left as it is');
    return { sent: 0, skipped: 0, advanced: false };
  }
  const plan = planned ?? takePlan(config, series, tenant, now);
  const sent = plan.occurrences.length === 0 ? 0 : await materialise(deps, series, tenant, plan.occurrences, now, held);
  if (plan.skipped > 0) await reportSkipped(deps, series, tenant, plan.skipped, now);
  const advance = await deps.series.advance(series, {
    cursor: plan.cursor,
    owed: plan.owed,
    caughtUp: plan.caughtUp,
    next: plan.next,
    now,
    expiresAt: expiresAtFor(plan.next ?? plan.cursor.after, config.retentionSeconds),
    ...(held === undefined ? {} : { placeFreedByCaller: true }),
  });
  const { advanced } = advance;
  // Completed, its place is freed with the places held, when it has a holder.
  if (advanced && plan.next === undefined) held?.free();
  if (advance.advanced && advance.placeKept)
    deps.logger.warn(
      { seriesId: series.id, tenant: series.tenant },
      'series completed: its place in the open-events quota could not be freed; the count stays high until reconciled',
    );
  deps.logger.info(
    { seriesId: series.id, version: series.version, sent, skipped: plan.skipped, owed: plan.owed.length > 0, next: plan.next, advanced },
    plan.next === undefined ? 'series taken: its last occurrences materialised, completed' : 'series taken',
  );
  return { sent, skipped: plan.skipped, advanced };
}

/** What a take of a series at `now` materialises, skips, leaves owed, and where it moves the series (see materialisation). */
function takePlan(
  config: SeriesDeps['config'],
  series: Pick<SeriesRecord, 'spec' | 'catchUpMs' | 'cursor' | 'owed' | 'caughtUp'>,
  tenant: Tenant,
  now: number,
): Materialisation {
  return materialisation(series.spec, series, {
    now,
    horizonMs: now + config.nearPathWindowSeconds * 1000,
    catchUpMs: series.catchUpMs,
    perMinute: tenant.seriesOccurrencesPerMinute,
    retakeDelayMs: retakeDelayMs(config),
  });
}

/** How many occurrences a new series' first take at `now` materialises (as takeSeries would plan it once the series is stored). */
export function firstTakeOf(config: SeriesDeps['config'], series: NewSeries, tenant: Tenant, now: number): number {
  return takePlan(config, series, tenant, now).occurrences.length;
}

/**
 * Places held in one tenant's quotas for a batch of series' takes (EventStore.holdPlaces): the
 * batch writes the tenant's counter once ahead for all its takes' occurrences, and once after
 * to settle, rather than once a take and once a completion. A take uses them for its
 * occurrences when enough are left (else it takes its own, as alone); a duplicate's place and
 * those never used are given back, and the places of series that completed freed, in the settle.
 */
export class HeldPlaces {
  private used = 0;
  private givenBack = 0;
  private freed = 0;

  constructor(
    readonly tenant: string,
    readonly heldAt: number,
    readonly count: number,
  ) {}

  /** Takes `n` of the places for one take's new events; false, taking none, when fewer are left. */
  take(n: number): boolean {
    if (this.used + n > this.count) return false;
    this.used += n;
    return true;
  }

  /** A place taken for an event that existed already (a duplicate): unused after all. */
  giveBack(n = 1): void {
    this.givenBack += n;
  }

  /** A series completed: its place is freed with the settle. */
  free(): void {
    this.freed += 1;
  }

  settled(): PlacesSettled {
    return { heldAt: this.heldAt, unused: this.count - this.used + this.givenBack, freed: this.freed };
  }
}

/**
 * Holds places in `tenant`'s quotas for `count` new events (see HeldPlaces); undefined when they
 * do not all fit (each take then takes its own, and is refused as alone). None takes no write.
 */
export async function holdPlaces(
  deps: Pick<SeriesDeps, 'store'>,
  tenant: Tenant,
  now: number,
  count: number,
): Promise<HeldPlaces | undefined> {
  return (await deps.store.holdPlaces(tenant.id, tenant.quotas, now, count)) ? new HeldPlaces(tenant.id, now, count) : undefined;
}

/** Settles places held (see HeldPlaces): one counter write; a failure is logged, the count erring high. */
export async function settlePlaces(deps: Pick<SeriesDeps, 'store' | 'logger'>, held: HeldPlaces): Promise<void> {
  const settled = held.settled();
  if (await deps.store.settlePlaces(held.tenant, settled)) return;
  deps.logger.warn(
    { tenant: held.tenant, ...settled },
    "places held for series' takes could not be settled; the open-events count stays high until reconciled",
  );
}

/**
 * Takes a batch of series at `now` (loading's chunk), one after another, each tenant's places
 * held ahead in one write for all its takes' occurrences and settled in one write after them
 * (see HeldPlaces): a chunk of 100 minute series writes its tenant's counter twice, not 200 times.
 */
export async function takeSeriesTogether(deps: SeriesDeps, batch: readonly SeriesRecord[], now: number): Promise<void> {
  const byTenant = new Map<string, SeriesRecord[]>();
  for (const series of batch) byTenant.set(series.tenant, [...(byTenant.get(series.tenant) ?? []), series]);
  for (const [tenantId, all] of byTenant) {
    const tenant = await lookUpTenant(
      deps.tenants,
      tenantId,
      all.flatMap((series) => [series.target, series.failureTopic]),
    );
    const plans = new Map<SeriesRecord, Materialisation>();
    if (tenant !== undefined) {
      for (const series of all) {
        plans.set(series, takePlan(deps.config, series, tenant, now));
        // A plan walks the calendar for a few milliseconds: a chunk's hundred of them in one go
        // would hold up everything else the process does, the emitter's publishes included.
        await yieldToOtherWork();
      }
    }
    const count = [...plans.values()].reduce((sum, plan) => sum + plan.occurrences.length, 0);
    const held = tenant === undefined ? undefined : await holdPlaces(deps, tenant, now, count);
    try {
      // Each take is planned as above: the same series at the same `now` plans the same.
      for (const series of all) await takeSeries(deps, series, now, held, plans.get(series));
    } finally {
      if (held !== undefined) await settlePlaces(deps, held);
    }
  }
}

/** Where a series' notices go: its failure topic, else its tenant's dead-letter topic. */
function noticeTo(series: SeriesRecord, tenant: Tenant) {
  return { failureTopic: series.failureTopic, deadLetterTopic: tenant.deadLetterTopic };
}

/**
 * Creates a take's occurrences as events (a conditional insert each, with its place in the
 * quota) and sends them to the delay queue; returns how many were sent. An occurrence an earlier
 * try of the same take created is sent again while it is still queued as that take left it.
 */
async function materialise(
  deps: SeriesDeps,
  series: SeriesRecord,
  tenant: Tenant,
  occurrences: readonly Occurrence[],
  now: number,
  held: HeldPlaces | undefined,
): Promise<number> {
  const { config } = deps;
  const takeId = seriesTakeId(series);
  const newToken = deps.newToken ?? randomUUID;
  const payload = await deps.series.payload(series);
  const entries = occurrences.map((occurrence): NewEvent => {
    const event = occurrenceEvent(series, payload, occurrence);
    return {
      event,
      clientId: undefined,
      inputMessageId: takeId,
      requestHash: requestHashOf(event),
      placement: { state: EVENT_STATE.queued, shard: shardOf(event.id, config) },
      queuedBy: newToken(),
      createdBy: newToken(),
      quotas: tenant.quotas,
      now,
      expiresAt: expiresAtFor(event.dueAt, config.retentionSeconds),
    };
  });
  const placesHeld = held?.take(entries.length) === true;
  const outcomes = await deps.store.createMany(entries, { placesHeld });
  const sends: { event: ScheduledEvent; queuedBy: string | undefined }[] = [];
  for (const [index, outcome] of outcomes.entries()) {
    const { event, queuedBy } = entries[index] as NewEvent;
    // Its place was held, and is not taken by an event that existed already.
    if (placesHeld && outcome.outcome === 'duplicate') held?.giveBack();
    if (outcome.outcome === 'created') sends.push({ event, queuedBy });
    else if (outcome.outcome === 'unknown')
      throw new TransientError(`recording occurrence ${event.id} of ${series.id} did not complete; retrying`);
    else if (outcome.outcome === 'quota-exceeded')
      await reportOverQuota(deps, series, tenant, event, tenant.quotas[outcome.quota], outcome.quota, now);
    else if (placedOnDelayQueueBy(outcome.existing) === takeId) {
      // This take's own occurrence, made by an earlier try that may not have sent it: a new copy, the old one dropped.
      const again = newToken();
      if (await deps.store.requeue(event.id, { placedBy: takeId, version: 1, queuedBy: again, now }))
        sends.push({ event, queuedBy: again });
    }
  }
  if (sends.length === 0) return 0;
  const sendTime = deps.clock.now();
  const failures = await deps.delayQueue.send(
    sends.map(({ event, queuedBy }) => ({ event, queuedBy, delaySeconds: delaySecondsFor(event.dueAt, sendTime, config.emitterLeadMs) })),
  );
  if (failures.length > 0)
    throw new TransientError(
      `${failures.length} occurrences of ${series.id} could not be sent to the delay queue (${failures[0]?.reason})`,
    );
  deps.metrics.count('EventsDelayed', sends.length);
  return sends.length;
}

/** An occurrence over its tenant's quota: refused as a one-off event would be, and the client told once; the series goes on. */
async function reportOverQuota(
  deps: SeriesDeps,
  series: SeriesRecord,
  tenant: Tenant,
  event: ScheduledEvent,
  limit: number,
  quota: string,
  now: number,
): Promise<void> {
  const message = `occurrence ${event.id} of series ${series.id}: tenant "${tenant.id}" is at its ${quota} quota (${limit})`;
  const notice = failureNotice(REASON.QUOTA_EXCEEDED, message, requestQuote(event), now, { eventId: event.id, details: { quota, limit } });
  await reportFailure(
    deps,
    (to, body) => deps.delayQueue.sendNotice(noticeId(event.id), tenant.id, to, body),
    notice,
    noticeTo(series, tenant),
  );
}

/**
 * Occurrences past the catch-up window: reported once, named after what skipped them (by default
 * the take: a take made again reports them once).
 */
export async function reportSkipped(
  deps: Pick<SeriesDeps, 'delayQueue' | 'logger' | 'metrics'>,
  series: SeriesRecord,
  tenant: Tenant,
  skipped: number,
  now: number,
  source = seriesTakeId(series),
): Promise<void> {
  const catchUpSeconds = series.catchUpMs / 1000;
  const message = `${skipped} occurrences of series ${series.id} were due more than ${catchUpSeconds} s ago (its catch-up window) and were not delivered`;
  const notice = failureNotice(REASON.OCCURRENCE_SKIPPED, message, seriesQuote(series), now, {
    eventId: series.id,
    details: { skipped, catchUpSeconds },
  });
  const id = noticeId(source);
  await reportFailure(deps, (to, body) => deps.delayQueue.sendNotice(id, tenant.id, to, body), notice, noticeTo(series, tenant));
}

/** A series as its request would say it (its payload left out: a notice about the series, not one occurrence). */
function seriesQuote(series: SeriesRecord): Record<string, unknown> {
  return {
    schedule: series.spec.expression.text,
    timezone: series.spec.timezone,
    target: series.target,
    ...(series.user === undefined ? {} : { user: series.user }),
    ...(series.failureTopic === undefined ? {} : { failure_topic: series.failureTopic }),
    ...(series.labels === undefined || series.labels.length === 0 ? {} : { labels: series.labels }),
  };
}

export interface SeriesCancelDeps {
  readonly config: Pick<SchedulerConfig, 'changeCutoffSeconds' | 'retentionSeconds'>;
  readonly store: Pick<EventStore, 'cancel'>;
  readonly series: Pick<SeriesStore, 'cancel'>;
  readonly clock: Clock;
}

/**
 * Cancels a series: its record (no occurrence is materialised after it), then the occurrences
 * it materialised that are due after the change cutoff, whose ids follow from the series and
 * its cursor (each with the event's own cancel, which frees its place). A cancel delivered again
 * finds the series cancelled by itself and cancels the occurrences again (those done are refused
 * as ended). Undefined when no such series of the tenant is open to cancel.
 */
export async function cancelSeries(
  deps: SeriesCancelDeps,
  id: string,
  tenant: string,
  change: ChangeRequest,
): Promise<{ readonly cancelled: number; readonly again: boolean } | { readonly refused: SeriesRecord | undefined }> {
  const now = deps.clock.now();
  const expiresAt = expiresAtFor(now, deps.config.retentionSeconds);
  const result = await deps.series.cancel(id, tenant, { ...change, expiresAt });
  let series: SeriesRecord;
  if (result.outcome === 'cancelled') series = result.series;
  else if (result.current?.state === SERIES_STATE.cancelled && result.current.cancelledBy === change.by) series = result.current;
  else return { refused: result.current };
  const { cancelled } = await cancelMaterialised(deps, series, change);
  // `again`: this change had cancelled the series, on an earlier delivery.
  return { cancelled, again: result.outcome !== 'cancelled' };
}

/**
 * Cancels the occurrences a series materialised that are due after the change cutoff (each with
 * the event's own cancel, which frees its place), in order of due time. What it cancelled, and
 * until when the series' occurrences stand: the cutoff, or the last of the first ones the
 * event's own cutoff kept (its clock ran on), so that nothing made anew after it is delivered
 * twice. A cancel delivered again finds those it cancelled as its own.
 */
export async function cancelMaterialised(
  deps: Pick<SeriesCancelDeps, 'config' | 'store' | 'clock'>,
  series: SeriesRecord,
  change: ChangeRequest,
): Promise<{ readonly cancelled: number; readonly keptUntil: number }> {
  const now = deps.clock.now();
  const expiresAt = expiresAtFor(now, deps.config.retentionSeconds);
  const cutoffMs = deps.config.changeCutoffSeconds * 1000;
  let keptUntil = now + cutoffMs;
  let cancelled = 0;
  for (const dueAt of materialisedAfter(series, keptUntil)) {
    const id = occurrenceId(series.id, dueAt, series.revision);
    const outcome = await deps.store.cancel(id, { tenant: series.tenant, cutoffMs }, { ...change, expiresAt });
    if (outcome.outcome === 'cancelled' || outcome.current?.cancelledBy === change.by) cancelled++;
    else if (cancelled === 0) keptUntil = dueAt;
  }
  return { cancelled, keptUntil };
}
