import type { SQSRecord } from 'aws-lambda';
import type { EventRecord } from '../domain/lifecycle.js';
import { quotaExceeded } from '../domain/quotas.js';
import type { EventRejectedError } from '../domain/reasons.js';
import type { SeriesRecord } from '../domain/series.js';
import { isSeriesId, seriesId } from '../domain/table-keys.js';
import type { Tenant } from '../domain/tenants.js';
import { receiveCount } from './batch.js';
import type { Intent, PlannedMessage } from './ingest-plan.js';
import type { BulkCancelJobs } from './ports/bulk-cancel.js';
import type { CreateOutcome, EventStore, NewEvent } from './ports/event-store.js';
import type { SeriesStore } from './ports/series-store.js';
import type { TenantPauses } from './ports/tenants.js';

/**
 * Ingest's admission: each tenant's new events and control requests of a batch counted against
 * its quotas together, in one call to the store (one counter write), and what that decided for
 * each of their records.
 */

/** The requests that change what exists rather than add to it: counted against `maxControlPerSecond`. */
export type ControlIntent = Extract<Intent, { kind: 'cancel' | 'reschedule' | 'pause' | 'resume' | 'bulk-cancel' | 'change-series' }>;

const CONTROL_KINDS: ReadonlySet<Intent['kind']> = new Set(['cancel', 'reschedule', 'pause', 'resume', 'bulk-cancel', 'change-series']);

export function isControl(intent: Intent): intent is ControlIntent {
  return CONTROL_KINDS.has(intent.kind);
}

/** What admission reads and writes. */
export interface AdmissionDeps {
  readonly store: Pick<EventStore, 'admit' | 'read'>;
  readonly series: Pick<SeriesStore, 'read'>;
  readonly jobs: Pick<BulkCancelJobs, 'get'>;
  readonly pauses: Pick<TenantPauses, 'lastChange'>;
}

/** What admission decided for each record of the batch it took. */
export interface Admissions {
  /** The outcome of each schedule request's new event. */
  readonly created: ReadonlyMap<SQSRecord, Promise<CreateOutcome>>;
  /** Each control request's refusal over its tenant's `maxControlPerSecond`; undefined when it is taken. */
  readonly controls: ReadonlyMap<SQSRecord, Promise<EventRejectedError | undefined>>;
  /**
   * Of the cancels and reschedules taken, whether each names neither an event nor a series of
   * its tenant's, as one read of them all found (see namingNothing): such a change is refused as
   * not found with no write. False where the read could not tell (it failed, or the batch
   * creates the event): the change is then written and judged as ever.
   */
  readonly namesNothing: ReadonlyMap<SQSRecord, Promise<boolean>>;
}

interface PlannedControl extends PlannedMessage {
  readonly intent: ControlIntent;
}

/** One tenant's share of the batch: its new events and its control requests, in batch order. */
interface TenantShare {
  readonly tenant: Tenant;
  readonly creates: { readonly record: SQSRecord; readonly entry: NewEvent }[];
  readonly controls: PlannedControl[];
}

function sharesOf(plan: readonly PlannedMessage[]): Map<string, TenantShare> {
  const shares = new Map<string, TenantShare>();
  for (const planned of plan) {
    const { tenant, intent, record } = planned;
    if (tenant === undefined || (intent.kind !== 'create' && !isControl(intent))) continue;
    const share = shares.get(tenant.id) ?? { tenant, creates: [], controls: [] };
    if (intent.kind === 'create') share.creates.push({ record, entry: intent.entry });
    else share.controls.push({ ...planned, intent });
    shares.set(tenant.id, share);
  }
  return shares;
}

/**
 * Hands each tenant's new events and control requests of the batch to the store together, so
 * its quota counters are written once per batch rather than once per request (they are single
 * items, and a busy tenant's would otherwise be its bottleneck), and its records in batched
 * writes. The first control requests its `maxControlPerSecond` leaves room for are taken; the
 * others are refused (see refusedOverQuota).
 */
export function admitTogether(deps: AdmissionDeps, plan: readonly PlannedMessage[], now: number): Admissions {
  const created = new Map<SQSRecord, Promise<CreateOutcome>>();
  const controls = new Map<SQSRecord, Promise<EventRejectedError | undefined>>();
  const namesNothing = new Map<SQSRecord, Promise<boolean>>();
  for (const { tenant, creates, controls: asked } of sharesOf(plan).values()) {
    const entries = creates.map(({ entry }) => entry);
    const admitted = deps.store.admit({ tenant: tenant.id, quotas: tenant.quotas, now, entries, controls: asked.length });
    for (const [index, { record }] of creates.entries())
      created.set(
        record,
        admitted.then(({ outcomes }) => outcomes[index] as CreateOutcome),
      );
    // Each promise made here is awaited by its record's handler: none is left to reject unheard.
    if (asked.length === 0) continue;
    const refusals = admitted.then(({ controls: taken }) => refusedOverQuota(deps, tenant, asked.slice(taken)));
    for (const { record } of asked)
      controls.set(
        record,
        refusals.then((refused) => refused.get(record)),
      );
    // A change of an event this batch creates waits for the create: it is written, not read ahead.
    const createdHere = new Set(creates.map(({ entry }) => entry.event.id));
    const changes = asked.filter(
      ({ intent }) => (intent.kind === 'cancel' || intent.kind === 'reschedule') && !createdHere.has(intent.eventId),
    );
    if (changes.length === 0) continue;
    const found = refusals
      .then((refused) =>
        namingNothing(
          deps,
          tenant.id,
          changes.filter(({ record }) => !refused.has(record)),
        ),
      )
      .catch(() => new Set<SQSRecord>());
    for (const { record } of changes)
      namesNothing.set(
        record,
        found.then((nothing) => nothing.has(record)),
      );
  }
  return { created, controls, namesNothing };
}

/**
 * Of a tenant's cancels and reschedules taken, those that name neither an event nor a series of
 * its own: the records they could name read in one call per kind of record, however many. A
 * flood of changes of ids that exist nowhere (a client looping on stale ids, or guessing them)
 * then costs a read a batch, not a conditional write and two reads each. The same refusal as
 * the write's: another tenant's record is not found either. A record made after this read is
 * as if made after a refused write.
 */
async function namingNothing(deps: AdmissionDeps, tenant: string, changes: readonly PlannedControl[]): Promise<ReadonlySet<SQSRecord>> {
  const eventIds = changes.flatMap(({ intent }) => (intent.kind === 'cancel' || intent.kind === 'reschedule' ? [intent.eventId] : []));
  if (eventIds.length === 0) return new Set();
  const [events, series] = await Promise.all([deps.store.read(eventIds), deps.series.read(eventIds.map(seriesOf))]);
  const nothing = (id: string): boolean => events.get(id)?.tenant !== tenant && series.get(seriesOf(id))?.tenant !== tenant;
  return new Set(
    changes
      .filter(({ intent }) => (intent.kind === 'cancel' || intent.kind === 'reschedule') && nothing(intent.eventId))
      .map(({ record }) => record),
  );
}

/**
 * The refusals of a tenant's control requests left out of its quota. One delivered before
 * (SQS's receive count) may have been counted then, and applied its change: one whose change
 * is found applied by its input message is taken, as its first delivery counted it (as a
 * schedule request whose event exists is never refused over a quota). A first delivery cannot
 * have been, and costs no read: a flood over the quota is refused without any.
 */
async function refusedOverQuota(
  deps: AdmissionDeps,
  tenant: Tenant,
  refused: readonly PlannedControl[],
): Promise<ReadonlyMap<SQSRecord, EventRejectedError>> {
  const applied = await appliedBefore(
    deps,
    tenant.id,
    refused.filter(({ record }) => receiveCount(record) > 1),
  );
  const error = quotaExceeded(tenant.id, 'maxControlPerSecond', tenant.quotas);
  return new Map(refused.filter(({ record }) => !applied.has(record)).map(({ record }) => [record, error]));
}

/** The series a change names: by its `s-` id, or the series of an event id (see changeSeriesById). */
const seriesOf = (id: string): string => (isSeriesId(id) ? id : seriesId(id));

/** What the reads found that a redelivered change may have left: the records it names, and its tenant's last pause or resume. */
interface Found {
  readonly events: ReadonlyMap<string, EventRecord>;
  readonly series: ReadonlyMap<string, SeriesRecord>;
  readonly pauseChange: string | undefined;
  readonly jobs: ReadonlySet<string>;
}

/**
 * Of a tenant's redelivered control requests, those whose change their input message applied:
 * the records they name read in one call per kind of record (and one per cancel by label).
 */
async function appliedBefore(deps: AdmissionDeps, tenant: string, redelivered: readonly PlannedControl[]): Promise<ReadonlySet<SQSRecord>> {
  if (redelivered.length === 0) return new Set();
  const intents = redelivered.map(({ intent }) => intent);
  const eventIds = intents.flatMap((intent) => (intent.kind === 'cancel' || intent.kind === 'reschedule' ? [intent.eventId] : []));
  const seriesIds = intents.flatMap((intent) =>
    intent.kind === 'cancel' || intent.kind === 'change-series' ? [seriesOf(intent.eventId)] : [],
  );
  const jobIds = intents.flatMap((intent) => (intent.kind === 'bulk-cancel' ? [intent.job.jobId] : []));
  const [events, series, pauseChange, jobs] = await Promise.all([
    eventIds.length === 0 ? new Map<string, EventRecord>() : deps.store.read(eventIds),
    seriesIds.length === 0 ? new Map<string, SeriesRecord>() : deps.series.read(seriesIds),
    intents.some(({ kind }) => kind === 'pause' || kind === 'resume') ? deps.pauses.lastChange(tenant) : undefined,
    Promise.all(jobIds.map(async (jobId) => ((await deps.jobs.get(jobId)) === undefined ? [] : [jobId]))),
  ]);
  const found: Found = { events, series, pauseChange, jobs: new Set(jobs.flat()) };
  return new Set(
    redelivered.filter(({ intent, message }) => changeApplied(intent, message.inputMessageId, tenant, found)).map(({ record }) => record),
  );
}

/** Whether the change a control request asks for was applied by its input message `by`, as far as what was found says. */
function changeApplied(intent: ControlIntent, by: string, tenant: string, found: Found): boolean {
  switch (intent.kind) {
    case 'cancel': {
      const event = found.events.get(intent.eventId);
      if (event?.tenant === tenant) return event.cancelledBy === by;
      const series = found.series.get(seriesOf(intent.eventId));
      return series?.tenant === tenant && series.cancelledBy === by;
    }
    case 'reschedule': {
      const event = found.events.get(intent.eventId);
      return event?.tenant === tenant && event.lastChangeBy === by;
    }
    case 'change-series': {
      const series = found.series.get(seriesOf(intent.eventId));
      return series?.tenant === tenant && series.lastChangeBy === by;
    }
    case 'pause':
    case 'resume':
      return found.pauseChange === by;
    case 'bulk-cancel':
      return found.jobs.has(intent.job.jobId);
  }
}
