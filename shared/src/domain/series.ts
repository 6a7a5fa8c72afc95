import { createHash } from 'node:crypto';
import type { ScheduledEvent } from './event.js';
import { parseScheduleExpression } from './recurrence/expression.js';
import { nextOccurrences, occurrencesFrom, type SeriesCursor } from './recurrence/occurrences.js';
import type { DstRule, RecurrenceSpec } from './recurrence/spec.js';
import { occurrenceId } from './table-keys.js';

/**
 * A recurring series: one item of its own in the table, keyed in the tenant index's stored
 * family at `dueAt`, the next occurrence not yet materialised, so that the loader finds it as it
 * finds a stored event. Each occurrence, once within the near-path window, becomes an event.
 */

/** A series' states: `active` until its last occurrence is materialised (`completed`) or it is cancelled. */
export const SERIES_STATE = { active: 'active', completed: 'completed', cancelled: 'cancelled' } as const;

export type SeriesState = (typeof SERIES_STATE)[keyof typeof SERIES_STATE];

/** What every occurrence of a series is delivered with, and where it goes. */
export interface SeriesContent {
  readonly id: string;
  readonly tenant: string;
  readonly user?: string;
  readonly target: string;
  readonly failureTopic?: string | undefined;
  readonly labels?: readonly string[] | undefined;
  /** Goes up with each change that cancelled materialised occurrences; 1 (or absent) until then (see occurrenceId). */
  readonly revision?: number | undefined;
}

/** An accepted series request, before it is stored. */
export interface NewSeries extends SeriesContent {
  readonly payload: string;
  readonly spec: RecurrenceSpec;
  /** Occurrences older than this when materialised are skipped and reported (see materialisation). */
  readonly catchUpMs: number;
  readonly clientId: string | undefined;
  /** The digest of the request as written (see seriesRequestHash). */
  readonly requestHash: string;
  /** Where the series starts: after the occurrences due before it was accepted. */
  readonly cursor: SeriesCursor;
}

/** A series as the store keeps it. */
export interface SeriesRecord extends SeriesContent {
  readonly state: SeriesState;
  readonly spec: RecurrenceSpec;
  readonly catchUpMs: number;
  readonly cursor: SeriesCursor;
  /** Goes up with every advance: a take writes only on the version it read. */
  readonly version: number;
  /** The next occurrence not yet materialised (epoch ms); none once completed. */
  readonly dueAt: number | undefined;
  /** The payload, when the record holds it (else in its payload item, see payloadItemId). */
  readonly payload?: string | undefined;
  readonly payloadKept: 'record' | 'item';
  readonly clientId?: string | undefined;
  readonly requestHash: string;
  readonly inputMessageId: string;
  readonly createdAt: number;
  readonly cancelledBy?: string | undefined;
  /** Set while its client has paused it (the pause's publish time): out of the tenant index, nothing materialised. */
  readonly pausedAt?: number | undefined;
  /** The publish time and input message of the last pause, resume or replacement applied: an older one changes nothing. */
  readonly lastChangeAt?: number | undefined;
  readonly lastChangeBy?: string | undefined;
  /** The digest of a payload a replacement gave, naming its payload item; absent: the request's (see payloadItemId). */
  readonly payloadDigest?: string | undefined;
  /** When the store may drop the record (epoch seconds): the retention period after its last due time. */
  readonly expiresAt: number;
  /** Late occurrences earlier takes left for later ones, to keep within the bound a minute (see materialisation); none when absent. */
  readonly owed?: readonly OwedOccurrences[] | undefined;
  /** The late occurrences sent in the minute of the last take that sent any (see materialisation). */
  readonly caughtUp?: MinuteCount | undefined;
}

/**
 * Late occurrences owed: those after `after` up to `through`, numbered from `fired + 1`. Past
 * the series' cursor, which counts them in `fired`, but not yet materialised.
 */
export interface OwedOccurrences {
  readonly after: number;
  readonly fired: number;
  readonly through: number;
}

/** How many late occurrences the takes of one minute (its first instant, epoch ms) sent. */
export interface MinuteCount {
  readonly minute: number;
  readonly sent: number;
}

/** The spec as the record keeps it: the expression's text, checked again (and compiled) when read. */
export interface StoredSpec {
  readonly schedule: string;
  readonly timezone: string;
  readonly start: number;
  readonly end?: number;
  readonly count?: number;
  readonly offsetMs: number;
  readonly gap: DstRule['gap'];
  readonly overlap: DstRule['overlap'];
}

export function storedSpec(spec: RecurrenceSpec): StoredSpec {
  return {
    schedule: spec.expression.text,
    timezone: spec.timezone,
    start: spec.start,
    ...(spec.end === undefined ? {} : { end: spec.end }),
    ...(spec.count === undefined ? {} : { count: spec.count }),
    offsetMs: spec.offsetMs,
    gap: spec.dst.gap,
    overlap: spec.dst.overlap,
  };
}

/** The spec a record keeps; it was checked at ingest, so a refusal here is a corrupt record. */
export function specFromStored(stored: StoredSpec): RecurrenceSpec {
  const check = parseScheduleExpression(stored.schedule);
  if (!check.ok) throw new TypeError(`stored schedule ${stored.schedule} is not valid: ${check.problem}`);
  return {
    expression: check.expression,
    timezone: stored.timezone,
    start: stored.start,
    ...(stored.end === undefined ? {} : { end: stored.end }),
    ...(stored.count === undefined ? {} : { count: stored.count }),
    offsetMs: stored.offsetMs,
    dst: { gap: stored.gap, overlap: stored.overlap },
  };
}

/**
 * A digest of a series request as its client wrote it (not of the spec: a `start` left out is
 * when it was published, which differs between two publishes of the same request). The same id
 * with another digest is another request, refused as IDEMPOTENCY_KEY_REUSED.
 */
export function seriesRequestHash(
  fields: Readonly<Record<string, unknown>>,
  content: Omit<SeriesContent, 'id' | 'tenant'> & { payload: string },
): string {
  const recurring = ['schedule', 'timezone', 'start', 'end', 'count', 'offset', 'dst', 'catch_up_seconds'].map(
    (name) => fields[name] ?? null,
  );
  const labels = content.labels === undefined ? [] : [...content.labels].sort();
  const text = JSON.stringify([recurring, content.target, content.payload, content.failureTopic ?? null, content.user ?? null, labels]);
  return createHash('sha256').update(text).digest('base64url').slice(0, 32);
}

/** Whose payload item holds a series' payload: named by the request's digest, or by a replacement's payload's. */
export function seriesPayloadOwner(series: Pick<SeriesRecord, 'id' | 'requestHash' | 'payloadDigest'>): {
  id: string;
  requestHash: string;
} {
  return { id: series.id, requestHash: series.payloadDigest ?? series.requestHash };
}

/** A payload's digest: a replacement's payload item is named by its content. */
export function payloadDigest(payload: string): string {
  return createHash('sha256').update(payload).digest('base64url').slice(0, 32);
}

/** One occurrence to materialise: its due time and its number in the series (1-based). */
export interface Occurrence {
  readonly dueAt: number;
  readonly occurrence: number;
}

/** Where a take finds a series: its cursor, and what earlier takes left owed and sent late this minute. */
export type SeriesPosition = Pick<SeriesRecord, 'cursor' | 'owed' | 'caughtUp'>;

/** What one take of a series does. */
export interface Materialisation {
  /** Each becomes an event: late ones caught up (oldest first), then those due from now to the horizon. */
  readonly occurrences: readonly Occurrence[];
  /** Due before the catch-up window: not delivered, reported once with their count. */
  readonly skipped: number;
  /** Past every occurrence materialised, skipped or owed. */
  readonly cursor: SeriesCursor;
  /** Late occurrences left to the next takes (the bound a minute), oldest first. */
  readonly owed: readonly OwedOccurrences[];
  /** The late occurrences sent this minute, this take's with the earlier takes'; undefined: none. */
  readonly caughtUp: MinuteCount | undefined;
  /**
   * When the series is to be taken next (its new `dueAt`): the horizon while occurrences are
   * owed (the loader hands it out again as one whose next occurrence is just past the window,
   * at one of its next two ticks), else its first occurrence not materialised plus
   * `retakeDelayMs`; undefined: the series has no more.
   */
  readonly next: number | undefined;
}

/** Where and how a take runs. */
export interface TakeBounds {
  readonly now: number;
  /** Now plus the near-path window: every occurrence due before it is materialised now, or owed. */
  readonly horizonMs: number;
  /** The series' catch-up window: an occurrence due longer ago is skipped. */
  readonly catchUpMs: number;
  /** Its tenant's bound: most occurrences the series is delivered in one minute. */
  readonly perMinute: number;
  /** How long after its next occurrence the series is keyed to be taken again (see retakeDelayMs); 0 when absent. */
  readonly retakeDelayMs?: number;
}

/**
 * How long after its next occurrence a series is keyed in the index. The loader hands out what
 * is keyed before its tick plus its lookahead, so a series comes back once its next occurrence is
 * half a near-path window away, not a tick after each take: a take then materialises half a
 * window of a frequent series (a minute's series, 5 occurrences with the defaults), which share
 * its quota and advance writes, and each occurrence is still sent half a window before it is due.
 * The key stays ahead of the loader's cursor: the next occurrence is at least a window away.
 */
export function retakeDelayMs(config: { readonly nearPathWindowSeconds: number; readonly loaderLookaheadSeconds: number }): number {
  return (config.loaderLookaheadSeconds - config.nearPathWindowSeconds / 2) * 1000;
}

const MINUTE_MS = 60_000;

/**
 * Which occurrences a take at `now` materialises. Every one after the cursor due before the
 * horizon is passed by the cursor: those due from now on are materialised (on time, never held
 * back), those due more than `catchUpMs` before `now` are skipped (an outage or a pause of the
 * loader left them behind: never a burst beyond the catch-up window), and those late within the
 * window join the owed ones. Owed ones are then sent oldest first, as many as the minute has room
 * for: `perMinute`, less the occurrences due in this minute that are delivered on time, less the
 * late ones the minute's earlier takes sent (`caughtUp`). The rest stay owed, numbered and in
 * order, for the next takes, which skip those that have fallen out of the window by then. So an
 * occurrence is materialised once, or skipped and counted once, and the series is delivered at
 * most `perMinute` occurrences in any minute. Pure: the same position, spec and bounds give the
 * same plan.
 */
export function materialisation(spec: RecurrenceSpec, from: SeriesPosition, at: TakeBounds): Materialisation {
  const oldest = at.now - at.catchUpMs;
  const onTime: Occurrence[] = [];
  let skipped = 0;
  let cursor = from.cursor;
  let late: OwedOccurrences | undefined;
  let next: number | undefined;
  for (const dueAt of occurrencesFrom(spec, from.cursor)) {
    if (dueAt >= at.horizonMs) {
      next = dueAt;
      break;
    }
    const before = cursor;
    cursor = { after: dueAt, fired: cursor.fired + 1 };
    if (dueAt < oldest) skipped++;
    else if (dueAt < at.now) late = { ...(late ?? before), through: dueAt };
    else onTime.push({ dueAt, occurrence: cursor.fired });
  }
  const minute = Math.floor(at.now / MINUTE_MS) * MINUTE_MS;
  const sentBefore = from.caughtUp?.minute === minute ? from.caughtUp.sent : 0;
  let room = Math.max(0, at.perMinute - sentBefore - onTimeIn(minute, spec, from, onTime, next));
  const caughtUp: Occurrence[] = [];
  const owed: OwedOccurrences[] = [];
  for (const range of withLate(from.owed ?? [], late)) {
    let rest = range;
    for (const occurrence of owedOccurrences(spec, range)) {
      if (occurrence.dueAt < oldest) skipped++;
      // Ranges are oldest first: once one within the window waits, so does every one after it.
      else if (room === 0) break;
      else {
        caughtUp.push(occurrence);
        room--;
      }
      rest = { after: occurrence.dueAt, fired: occurrence.occurrence, through: range.through };
    }
    if (rest.after < rest.through) owed.push(rest);
  }
  const sent = sentBefore + caughtUp.length;
  return {
    occurrences: [...caughtUp, ...onTime],
    skipped,
    cursor,
    owed,
    caughtUp: sent === 0 ? undefined : { minute, sent },
    next: owed.length > 0 ? at.horizonMs : next === undefined ? undefined : next + (at.retakeDelayMs ?? 0),
  };
}

/** The late occurrences this take found added to those owed: one range with the last when they follow it. */
function withLate(owed: readonly OwedOccurrences[], late: OwedOccurrences | undefined): readonly OwedOccurrences[] {
  if (late === undefined) return owed;
  const last = owed.at(-1);
  if (last?.through === late.after) return [...owed.slice(0, -1), { ...last, through: late.through }];
  return [...owed, late];
}

/** An owed range's occurrences, oldest first, each with its number. */
function* owedOccurrences(spec: RecurrenceSpec, range: OwedOccurrences): Generator<Occurrence> {
  let fired = range.fired;
  for (const dueAt of occurrencesFrom(spec, { after: range.after, fired: range.fired })) {
    if (dueAt > range.through) return;
    fired++;
    yield { dueAt, occurrence: fired };
  }
}

/**
 * The occurrences due in the minute that are delivered on time: those earlier takes materialised
 * (before the cursor, not owed), those this take materialises from now on, and the next one
 * when it falls in the minute too (a near-path window under a minute: a later take makes it).
 * One due in the minute that an earlier take skipped (a catch-up window under a minute) is
 * counted too: the bound errs strict, never loose.
 */
function onTimeIn(
  minute: number,
  spec: RecurrenceSpec,
  from: SeriesPosition,
  onTime: readonly Occurrence[],
  next: number | undefined,
): number {
  const inMinute = (dueAt: number) => dueAt >= minute && dueAt < minute + MINUTE_MS;
  const owed = from.owed ?? [];
  const earlier = materialisedAfter({ spec, cursor: from.cursor }, minute - 1).filter(
    (dueAt) => !owed.some((range) => dueAt > range.after && dueAt <= range.through),
  );
  return [...earlier, ...onTime.map(({ dueAt }) => dueAt), ...(next === undefined ? [] : [next])].filter(inMinute).length;
}

/** The event an occurrence is: the series' content and payload, its own id and due time, and its place in the series. */
export function occurrenceEvent(series: SeriesContent, payload: string, occurrence: Occurrence): ScheduledEvent {
  return {
    id: occurrenceId(series.id, occurrence.dueAt, series.revision),
    tenant: series.tenant,
    ...(series.user === undefined ? {} : { user: series.user }),
    target: series.target,
    payload,
    failureTopic: series.failureTopic,
    dueAt: occurrence.dueAt,
    version: 1,
    ...(series.labels === undefined || series.labels.length === 0 ? {} : { labels: series.labels }),
    series: { id: series.id, occurrence: occurrence.occurrence },
  };
}

/**
 * The take of a series at one version, as its occurrences' records name who placed them on the
 * delay queue (EventRecord.inputMessageId): a repeated take of the same version finds its own
 * occurrences, and sends again those still queued as it left them.
 */
export function seriesTakeId(series: Pick<SeriesRecord, 'id' | 'version'>): string {
  return `${series.id}.v${series.version}`;
}

/** The occurrences a series materialised that are due after `from`: up to its cursor, which no take passes without them. */
export function materialisedAfter(series: Pick<SeriesRecord, 'spec' | 'cursor'>, from: number): number[] {
  if (series.cursor.after <= from) return [];
  // Not bounded by `count` here: the cursor bounds what was materialised.
  const { count, ...unbounded } = series.spec;
  const due: number[] = [];
  for (const dueAt of occurrencesFrom(unbounded, { after: from, fired: 0 })) {
    if (dueAt > series.cursor.after) break;
    due.push(dueAt);
  }
  return due;
}

/** An occurrence still to come, and whether a take has made it an event already. */
export interface UpcomingOccurrence extends Occurrence {
  readonly materialised: boolean;
}

/**
 * The next `n` occurrences of a series due after `now`: first those materialised and not yet
 * due, then those after its cursor. None once it has ended.
 */
export function upcomingOccurrences(
  series: Pick<SeriesRecord, 'spec' | 'cursor' | 'state' | 'pausedAt'>,
  now: number,
  n: number,
): UpcomingOccurrence[] {
  if (series.state !== SERIES_STATE.active || series.pausedAt !== undefined) return [];
  const { cursor } = series;
  const pending = materialisedAfter(series, now);
  const made = pending.slice(0, n);
  const first = cursor.fired - pending.length + 1;
  return [
    ...made.map((dueAt, index) => ({ dueAt, occurrence: first + index, materialised: true })),
    ...nextOccurrences(series.spec, cursor, n - made.length).map((dueAt, index) => ({
      dueAt,
      occurrence: cursor.fired + 1 + index,
      materialised: false,
    })),
  ];
}
