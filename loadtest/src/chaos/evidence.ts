import { lifecycleSteps, type EventRecord } from '@adhoc-scheduler/shared';
import { countFaults, type AwsService, type FaultCounts, type FaultKind, type InjectedFault } from './faults.js';
import type { KillRecord } from './kills.js';

/** Which part of the chaos run's load an event belongs to. */
export type EventPart = 'near' | 'far' | 'spike';

/** An event the run looks at closely: missing, early, reported failed, or among the latest. */
export interface WatchedEvent {
  readonly eventId: string;
  readonly clientId: string;
  readonly part: EventPart;
  readonly dueAt: number;
  /** When the run meant to publish it (the publish is later when the service was down then). */
  readonly publishAt: number;
}

export type EventOutcome =
  | { readonly kind: 'missing' }
  | { readonly kind: 'early'; readonly byMs: number }
  | { readonly kind: 'failed'; readonly reason: string }
  | { readonly kind: 'late'; readonly byMs: number };

/** An outcome in a few words, for the console and the report. */
export function describeOutcome(outcome: EventOutcome): string {
  switch (outcome.kind) {
    case 'missing':
      return 'missing';
    case 'failed':
      return `failed ${outcome.reason}`;
    case 'early':
    case 'late':
      return `${outcome.kind} by ${outcome.byMs} ms`;
  }
}

/**
 * Why an event was delivered more than once, as far as the run can tell: an SNS publish naming it
 * whose answer was lost (it took effect, and its retry published again); else a kill close to its
 * first delivery (its publish had answered, its end was not yet written); else something else.
 */
export type DuplicateCause = 'lostAnswer' | 'kill' | 'other';

/**
 * How far apart a kill and an event's first delivery may be for the kill to count as the cause of
 * its duplicate: its publish went out before the kill and reached the consumer within seconds,
 * across the restart at most; its end write would have returned within seconds after.
 */
const KILL_NEAR_DELIVERY_MS = 15_000;

export function duplicateCause(
  event: Pick<WatchedEvent, 'eventId' | 'clientId'>,
  firstReceivedAt: number,
  context: { readonly faults: readonly InjectedFault[]; readonly kills: readonly Pick<KillRecord, 'killedAt'>[] },
): DuplicateCause {
  const names = (ids: readonly string[]): boolean => ids.includes(event.eventId) || ids.includes(event.clientId);
  if (context.faults.some((fault) => fault.service === 'sns' && fault.kind === 'lost' && names(fault.ids))) return 'lostAnswer';
  if (context.kills.some(({ killedAt }) => Math.abs(killedAt - firstReceivedAt) <= KILL_NEAR_DELIVERY_MS)) return 'kill';
  return 'other';
}

/** How a part of the load was delivered: its events' first-delivery lateness (ms) and the deliveries beyond the first. */
export interface PartDelivery {
  readonly events: number;
  /** Deliveries beyond each event's first. */
  readonly duplicated: number;
  /** The same, by what caused them (see duplicateCause). */
  readonly duplicatedBy: Readonly<Record<DuplicateCause, number>>;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/**
 * Lateness percentiles and duplicates of each part of the load (exact: a chaos run holds
 * thousands of events, not millions).
 */
export function deliveryByPart(
  delivered: readonly {
    readonly part: EventPart;
    readonly latenessMs: number;
    readonly deliveries: number;
    /** Why it was delivered more than once, when it was. */
    readonly duplicateCause?: DuplicateCause | undefined;
  }[],
): Partial<Record<EventPart, PartDelivery>> {
  interface Tally {
    readonly latenesses: number[];
    duplicated: number;
    readonly duplicatedBy: Record<DuplicateCause, number>;
  }
  const byPart: Partial<Record<EventPart, Tally>> = {};
  for (const { part, latenessMs, deliveries, duplicateCause: cause } of delivered) {
    byPart[part] ??= { latenesses: [], duplicated: 0, duplicatedBy: { lostAnswer: 0, kill: 0, other: 0 } };
    const entry = byPart[part];
    entry.latenesses.push(latenessMs);
    entry.duplicated += deliveries - 1;
    if (deliveries > 1) entry.duplicatedBy[cause ?? 'other'] += deliveries - 1;
  }
  const summary: Partial<Record<EventPart, PartDelivery>> = {};
  for (const [part, { latenesses, duplicated, duplicatedBy }] of Object.entries(byPart) as [EventPart, Tally][]) {
    const sorted = latenesses.sort((a, b) => a - b);
    const at = (share: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)] as number;
    summary[part] = { events: sorted.length, duplicated, duplicatedBy, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) as number };
  }
  return summary;
}

/** An event's record in the table at the end of the run; times in ms from its due time. */
export interface RecordSummary {
  readonly state: string;
  readonly version: number;
  readonly dueAt: string;
  /** Where its payload is: in the record (a repair could send it from there), its own item, or only in the delay queue. */
  readonly payloadKept: string;
  readonly created: number;
  readonly queued?: number | undefined;
  readonly emitted?: number | undefined;
  readonly failed?: number | undefined;
  readonly reason?: string | undefined;
  /** The loading message that moved it to the delay queue (far path). */
  readonly loadedBy?: string | undefined;
  /** The delay-queue copy that may emit it. */
  readonly queuedBy?: string | undefined;
}

/** What the run knows about one missing, early or failed event: the leads to follow in the service's log. */
export interface EventEvidence {
  readonly eventId: string;
  readonly clientId: string;
  readonly part: EventPart;
  readonly outcome: EventOutcome;
  readonly dueAt: string;
  readonly record: RecordSummary | 'none';
  /** Faults injected into calls that named the event (or its request), ms from its due time. */
  readonly faults: readonly {
    readonly id: string;
    readonly service: AwsService;
    readonly operation: string;
    readonly kind: FaultKind;
    readonly msFromDue: number;
  }[];
  /** Kills from its publish on, ms from its due time. */
  readonly kills: readonly { readonly n: number; readonly msFromDue: number }[];
  /** A message naming it sits in the dead-letter queue. */
  readonly inDeadLetterQueue: boolean;
}

export function summarizeRecord(record: EventRecord | undefined, dueAt: number): RecordSummary | 'none' {
  if (record === undefined) return 'none';
  const from = (at: number | undefined): number | undefined => (at === undefined ? undefined : at - dueAt);
  return {
    state: record.state,
    version: record.version,
    dueAt: new Date(record.dueAt).toISOString(),
    payloadKept: record.payloadKept,
    created: record.createdAt - dueAt,
    // Its latest send to the delay queue, whoever sent it (ingest, the loader, its sweep, a carry, a resume).
    queued: from(lifecycleSteps(record).findLast(({ step }) => step === 'queued')?.at),
    emitted: from(record.emittedAt),
    failed: from(record.failedAt),
    reason: record.reason,
    loadedBy: record.loadedBy,
    queuedBy: record.queuedBy,
  };
}

/** Joins what the run recorded about one event: its record, the faults that touched it, the kills it lived through. */
export function eventEvidence(
  event: WatchedEvent,
  outcome: EventOutcome,
  context: {
    readonly faults: readonly InjectedFault[];
    readonly kills: readonly KillRecord[];
    readonly record: EventRecord | undefined;
    readonly deadLetterIds: ReadonlySet<string>;
  },
): EventEvidence {
  const names = (ids: readonly string[]): boolean => ids.includes(event.eventId) || ids.includes(event.clientId);
  return {
    eventId: event.eventId,
    clientId: event.clientId,
    part: event.part,
    outcome,
    dueAt: new Date(event.dueAt).toISOString(),
    record: summarizeRecord(context.record, event.dueAt),
    faults: context.faults
      .filter((fault) => names(fault.ids))
      .map(({ id, service, operation, kind, at }) => ({ id, service, operation, kind, msFromDue: at - event.dueAt })),
    kills: context.kills
      .filter((kill) => kill.killedAt >= event.publishAt)
      .map((kill) => ({ n: kill.n, msFromDue: kill.killedAt - event.dueAt })),
    inDeadLetterQueue: context.deadLetterIds.has(event.eventId) || context.deadLetterIds.has(event.clientId),
  };
}

/** A kill as the report shows it: seconds into the run, how long the service was down. */
export interface KillSummary {
  readonly n: number;
  readonly secondsIntoRun: number;
  readonly atSpike: boolean;
  /** From the spike's due second, when the run had a spike. */
  readonly msFromSpike: number | undefined;
  /** From the kill until the emulators had exited, and until the new service was ready. */
  readonly emulatorsExitSeconds: number;
  readonly downSeconds: number;
}

export function summarizeKills(kills: readonly KillRecord[], runStartedAt: number, spikeAt: number | undefined): KillSummary[] {
  const seconds = (ms: number): number => Math.round(ms / 100) / 10;
  return kills.map((kill) => ({
    n: kill.n,
    secondsIntoRun: seconds(kill.killedAt - runStartedAt),
    atSpike: kill.atSpike,
    msFromSpike: spikeAt === undefined ? undefined : kill.killedAt - spikeAt,
    emulatorsExitSeconds: seconds(kill.emulatorsGoneAt - kill.killedAt),
    downSeconds: seconds(kill.readyAt - kill.killedAt),
  }));
}

export interface FaultSummary {
  readonly total: number;
  readonly refused: number;
  readonly lost: number;
  readonly byService: FaultCounts;
  /** Requests the service's clients made, by service (refused calls, which never went out, not included). */
  readonly requests: Readonly<Record<AwsService, number>>;
  /** Calls the service made: its requests and the calls refused. */
  readonly calls: number;
  /** Faults per call. */
  readonly share: number | undefined;
  /** Lines of the fault log cut short by a kill. */
  readonly unreadableLines: number;
}

export function summarizeFaults(
  faults: readonly InjectedFault[],
  unreadableLines: number,
  requests: Readonly<Record<AwsService, number>>,
): FaultSummary {
  const refused = faults.filter((fault) => fault.kind === 'refused').length;
  const calls = requests.sns + requests.sqs + requests.dynamodb + refused;
  return {
    total: faults.length,
    refused,
    lost: faults.length - refused,
    byService: countFaults(faults),
    requests,
    calls,
    share: calls === 0 ? undefined : Math.round((faults.length / calls) * 10_000) / 10_000,
    unreadableLines,
  };
}

/** What the service's dead-letter queue held at the end: messages by kind, and the ids they named. */
export interface DeadLetters {
  readonly messages: number;
  readonly byKind: Readonly<Record<string, number>>;
}

/** Which queue a dead letter came from, by its body: an input (ingest), a loading chunk, a delay-queue event or notice. */
export function deadLetterKind(body: string): string {
  try {
    const value = JSON.parse(body) as { Type?: unknown; ids?: unknown; kind?: unknown };
    if (value.Type === 'Notification') return 'input (ingest queue)';
    if (Array.isArray(value.ids)) return 'loading chunk (loading queue)';
    if (value.kind === 'event' || value.kind === 'notice' || value.kind === 'notices') return `${value.kind} (delay queue)`;
  } catch {
    // Not JSON: an input published as plain text.
  }
  return 'other';
}

/** Messages in a queue: ready to receive, handed out and not yet deleted, waiting out their delay. */
export interface QueueDepth {
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
}

/** The report of a chaos run, in results.json and the console summary. */
export interface ChaosReport {
  readonly seed: number;
  readonly faultRate: number;
  readonly killsPlanned: number;
  readonly kills: readonly KillSummary[];
  readonly faults: FaultSummary;
  /** The run's publish requests that failed (service down, or refusing) and were retried. */
  readonly publishRetries: number;
  readonly deadLetters: DeadLetters;
  /** What the service's queues still held at the end: events on their way (late), or stuck. */
  readonly queuesAtEnd: Readonly<Record<string, QueueDepth>>;
  /** Every missing, early and failed event, up to a limit, with what the run knows about it. */
  readonly events: readonly EventEvidence[];
  readonly eventsNotShown: number;
  /** Lateness and duplicates of each part of the load (near path, far path, spike). */
  readonly byPart: Partial<Record<EventPart, PartDelivery>>;
  /** The latest events delivered, with the same evidence. */
  readonly latest: readonly EventEvidence[];
}
