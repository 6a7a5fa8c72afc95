import type { EmissionEnding } from '../domain/emission.js';
import { endCountIncrements } from '../domain/end-counts.js';
import { DYNAMODB_TRANSACTION_ITEMS } from '../domain/limits.js';
import type { EndJournal } from './ports/emitter-records.js';
import type { EndsRecorded, EventStore } from './ports/event-store.js';
import type { Logger, SchedulerMetrics } from './ports/process.js';
import type { DelayQueue } from './ports/queues.js';

/** What became of an emission's end. */
export type EndOutcome =
  /** Recorded on its event, or found there already: by this delivery (an answer lost), or by another (a duplicate, counted and logged). */
  | 'recorded'
  /** Its write kept failing: handed over through the delay queue to a later delivery, which records it. */
  | 'handed-over'
  /** Kept in the process's journal, to be recorded by the writer (or, after a crash, by the next process): its message may go. */
  | 'journaled'
  /** Neither recorded nor handed over: the message that carried its event must stay, and may be published again. */
  | 'kept';

export interface EndSettled {
  readonly outcome: EndOutcome;
  /** The write that recorded it applied it here: the place it held in its tenant's open events is to be freed. */
  readonly freesPlace: boolean;
}

export interface EndWriterDeps {
  readonly store: Pick<EventStore, 'endEmissions' | 'releasePlaces' | 'countEnds'>;
  readonly delayQueue: Pick<DelayQueue, 'sendEnds'>;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
  /** Where ends are kept until recorded, where a process outlives none of its state but this (the local service on disk); none on Lambda. */
  readonly journal?: EndJournal;
}

/**
 * End writes one process keeps in flight. More would only queue in DynamoDB Local, which commits
 * one transaction at a time; two let the ends of later publishes go while one write is slow.
 */
const WRITES_IN_FLIGHT = 2;
/** Ends one write takes at most: a transaction's items (statements go 25 a request, in parallel). */
const ENDS_PER_WRITE = DYNAMODB_TRANSACTION_ITEMS;
/** Ends one hand-over message carries at most: about 200 bytes each, far below SQS's 1 MiB. */
const ENDS_PER_HAND_OVER = 100;
/** How long a journaled end whose write and hand-over both failed waits before its write is tried again. */
const JOURNALED_RETRY_MS = 1000;
/**
 * How long journaled ends wait at most for publishes to pause before they are written: long
 * enough that a spike's ends are recorded after its publishes, not while DynamoDB Local shares
 * the machine with them; short enough that listings show an emitted event a few seconds later.
 */
const JOURNALED_MAX_WAIT_MS = 3000;

/**
 * Records ends; two copies emitted at once are counted and logged here. The ends this write
 * applied are then added to their tenants' counts by minute, one write per tenant and minute
 * (see endCountIncrements), before the ends settle: on Lambda nothing runs after a handler
 * returns. An end applied by a write whose answer was lost is not counted (its event is
 * recorded all the same); a count that cannot be added is logged, and the counts err low by it.
 */
export async function recordEndings(
  deps: Pick<EndWriterDeps, 'store' | 'logger' | 'metrics'>,
  endings: readonly EmissionEnding[],
): Promise<EndsRecorded> {
  const recorded = await deps.store.endEmissions(endings);
  for (const { event } of recorded.alreadyEnded) {
    deps.metrics.count('DuplicateEmissions');
    deps.logger.warn(
      { eventId: event.id, version: event.version },
      'emitted, but another delivery had already ended the event: two copies were emitted at once',
    );
  }
  if (recorded.applied.length > 0) {
    try {
      await deps.store.countEnds(endCountIncrements(recorded.applied));
    } catch (error) {
      deps.logger.warn(
        { err: error, ends: recorded.applied.length },
        "could not add ends to their tenants' counts; the console's counts are short by them",
      );
    }
  }
  return recorded;
}

/**
 * Frees the places recorded ends released, one counter write per tenant. One that cannot be
 * freed is logged and left: the count stays high (never low) until reconciled.
 */
export async function releasePlaces(
  deps: { readonly store: Pick<EventStore, 'releasePlaces'>; readonly logger: Logger },
  freed: ReadonlyMap<string, number>,
): Promise<void> {
  if (freed.size === 0) return;
  let unreleased: readonly { readonly tenant: string; readonly count: number }[];
  try {
    unreleased = await deps.store.releasePlaces(freed);
  } catch (error) {
    deps.logger.warn({ err: error }, 'could not free places in the open-events quota');
    unreleased = [...freed].map(([tenant, count]) => ({ tenant, count }));
  }
  for (const { tenant, count } of unreleased) {
    deps.logger.warn(
      { tenant, count },
      'ends recorded, but their places in the open-events quota could not be freed; the count stays high until reconciled',
    );
  }
}

/** Places per tenant, counted up as ends free them. */
export function countPlaces(freed: Map<string, number>, endings: readonly Pick<EmissionEnding, 'event'>[]): void {
  for (const { event } of endings) freed.set(event.tenant, (freed.get(event.tenant) ?? 0) + 1);
}

interface Waiting {
  readonly ending: EmissionEnding;
  /** Settles the publish that waits for this end (or the replay of the journal a process before left); undefined once settled. */
  settle: ((settled: EndSettled) => void) | undefined;
  /** When it was handed to the writer (Date.now()): how long it has lingered. */
  readonly at: number;
  /** In the journal and not yet recorded nor handed over: the writer frees its place once it records it. */
  journaled: boolean;
}

/** How the end writer groups ends (see EndWriter). */
export interface EndWriterOptions {
  /** How long an end may wait for others before its write goes (SchedulerConfig.emitterEndsLingerMs); 0: none. */
  readonly lingerMs?: number;
}

/**
 * Records the ends of one process's emissions as their publishes answer, by group commit: an end
 * goes out when a write is free, and the ends that answer while every write is busy go together
 * in the next. So at low load each end is written soon after its publish answers, and in a spike
 * the writes grow instead of queuing. With a linger, an end waits up to `lingerMs` for others
 * before its write goes (a full write goes at once): where each write has a high fixed cost, a
 * steady trickle of publishes then costs a write every `lingerMs`, not one per publish call.
 *
 * With a journal (the local service on disk), each turn's answered ends are appended to it first,
 * and settle as `journaled` once it has them: their messages may go, and a publish waiting for a
 * place in the publish window gets it after an append, not after a table write (DynamoDB Local on
 * disk records a spike's ends several times slower than SNS publishes them). The writer records
 * them behind, frees their places itself, and empties the journal whenever nothing in it is left
 * unrecorded; a process that dies leaves them to the next (see `replay`), so a crash publishes
 * again only what had answered and was not yet in the journal.
 *
 * Ends whose writes kept failing are handed over through the delay queue, so that their messages can go
 * and no event is published again for want of its end. Only when that fails too is an end
 * `kept`: its message stays, and its redelivery finds the event open (a journaled end is written
 * again instead, a little later).
 */
export class EndWriter {
  private pending: Waiting[] = [];
  /** Answered ends not yet appended to the journal. */
  private unjournaled: Waiting[] = [];
  /** Appends to the journal in flight: one at most. */
  private appending = 0;
  /** Ends in the journal not yet recorded nor handed over: while any is, the journal is kept. */
  private unrecorded = 0;
  private writing = 0;
  private pumpScheduled = false;
  private lingerTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly lingerMs: number;
  /** When the last end answered (Date.now()): with a journal, writes wait for a pause in the publishes. */
  private lastEndAt = 0;
  /** The last append to the journal failed: ends wait for their writes again, as without one. */
  private journalFailing = false;
  private closed = false;

  constructor(
    private readonly deps: EndWriterDeps,
    { lingerMs = 0 }: EndWriterOptions = {},
  ) {
    this.lingerMs = lingerMs;
  }

  /** Records one end, with whatever others are waiting; settles once it is recorded, journaled, handed over, or neither. */
  record(ending: EmissionEnding): Promise<EndSettled> {
    return new Promise((settle) => {
      const entry: Waiting = { ending, settle, at: Date.now(), journaled: false };
      this.lastEndAt = entry.at;
      this.pending.push(entry);
      if (this.deps.journal) this.unjournaled.push(entry);
      this.pumpSoon();
    });
  }

  /**
   * Records the ends a process before left in the journal (kept there and, maybe, never recorded),
   * as journaled ends of this one. Resolves once every one is recorded or handed over: until then
   * a redelivered copy of such an event would find it open and be published a second time, so
   * nothing polls the delay queue before.
   */
  replay(ends: readonly EmissionEnding[]): Promise<void> {
    if (ends.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      let unsettled = ends.length;
      const settle = (): void => {
        unsettled -= 1;
        if (unsettled === 0) resolve();
      };
      for (const ending of ends) this.pending.push({ ending, settle, at: 0, journaled: true });
      this.unrecorded += ends.length;
      this.pumpSoon();
    });
  }

  /**
   * Stops writing: the writes and appends in flight finish; ends still waiting are left to the
   * journal, for the next process (every publish waiting for its end has been told by then: the
   * pollers stop first, once their handlers are done).
   */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.lingerTimer);
    while (this.writing > 0 || this.appending > 0) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  /** On the next turn of the event loop, so that the ends one PublishBatch answered go together. */
  private pumpSoon(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /**
   * When the ends waiting should go (Date.now() terms): once a write's worth waits, or the oldest
   * has lingered long enough. With a journal that keeps them, nothing waits on their writes: a
   * trickle (less than a write's worth waiting once the oldest has lingered) goes then, in a small
   * write; a spike's ends go once the publishes pause for the linger, or the oldest has waited its
   * longest, so that the table's work moves off the due second. A steady stream never pauses:
   * held for the longest wait, its ends would go as one large write every few seconds, and the
   * events due while DynamoDB Local works it would come late.
   */
  private writeDueAt(oldest: Waiting): number {
    const trickle = this.pending.length < ENDS_PER_WRITE;
    if (this.deps.journal !== undefined && !this.journalFailing)
      return trickle ? oldest.at + this.lingerMs : Math.min(this.lastEndAt + this.lingerMs, oldest.at + JOURNALED_MAX_WAIT_MS);
    return trickle ? oldest.at + this.lingerMs : oldest.at;
  }

  private ripe(): boolean {
    const [oldest] = this.pending;
    return oldest !== undefined && Date.now() >= this.writeDueAt(oldest);
  }

  private pump(): void {
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    if (this.closed) return;
    const { journal } = this.deps;
    // One append at a time, taking every end answered meanwhile: a sync to disk costs about the same for one end as for a thousand.
    if (journal !== undefined && this.unjournaled.length > 0 && this.appending === 0) void this.append(journal, this.unjournaled.splice(0));
    while (this.writing < WRITES_IN_FLIGHT && this.ripe()) {
      const taken = this.pending.splice(0, ENDS_PER_WRITE);
      this.writing += 1;
      void this.write(taken).finally(() => {
        this.writing -= 1;
        this.pump();
      });
    }
    const [oldest] = this.pending;
    if (oldest !== undefined && this.writing < WRITES_IN_FLIGHT)
      this.lingerTimer = setTimeout(() => this.pump(), this.writeDueAt(oldest) - Date.now());
  }

  /** Never throws: ends the journal could not take settle once recorded, as without one. */
  private async append(journal: EndJournal, entries: readonly Waiting[]): Promise<void> {
    this.appending += 1;
    try {
      await journal.keep(entries.map(({ ending }) => ending));
      this.journalFailing = false;
      for (const entry of entries) {
        // Recorded or handed over while it was being appended: settled already, nothing left to do.
        if (entry.settle === undefined) continue;
        entry.journaled = true;
        this.unrecorded += 1;
        settleOnce(entry, { outcome: 'journaled', freesPlace: false });
      }
    } catch (error) {
      this.journalFailing = true;
      this.deps.logger.warn({ err: error, ends: entries.length }, 'could not keep ends in the journal; they settle once recorded');
    } finally {
      this.appending -= 1;
      this.pump();
      await this.emptyJournalIfDone();
    }
  }

  /** Never throws: every end taken is settled, or journaled and left to a later write. */
  private async write(taken: readonly Waiting[]): Promise<void> {
    const endings = taken.map(({ ending }) => ending);
    let unknown: ReadonlySet<EmissionEnding>;
    let applied: ReadonlySet<EmissionEnding> = new Set();
    try {
      const recorded = await recordEndings(this.deps, endings);
      unknown = new Set(recorded.unknown);
      applied = new Set(recorded.applied);
    } catch (error) {
      this.deps.logger.warn({ err: error, ends: endings.length }, 'could not record ends; handing them over');
      unknown = new Set(endings);
    }
    const recorded = taken.filter(({ ending }) => !unknown.has(ending));
    // A journaled end's publish went on without its place: the writer frees it.
    const freed = new Map<string, number>();
    countPlaces(
      freed,
      recorded.filter((entry) => entry.journaled && applied.has(entry.ending)).map(({ ending }) => ending),
    );
    for (const entry of recorded) this.done(entry, { outcome: 'recorded', freesPlace: applied.has(entry.ending) });
    await releasePlaces(this.deps, freed);
    if (unknown.size > 0) await this.handOver(taken.filter(({ ending }) => unknown.has(ending)));
    await this.emptyJournalIfDone();
  }

  /** Never throws: every end given is settled, handed over or kept (a journaled one: written again later). */
  private async handOver(entries: readonly Waiting[]): Promise<void> {
    for (let from = 0; from < entries.length; from += ENDS_PER_HAND_OVER) {
      const chunk = entries.slice(from, from + ENDS_PER_HAND_OVER);
      const eventIds = chunk.map(({ ending }) => ending.event.id);
      try {
        await this.deps.delayQueue.sendEnds(chunk.map(({ ending }) => ending));
        this.deps.logger.warn({ eventIds }, 'emitted, but could not record it yet; the ends are handed over to be recorded later');
        for (const entry of chunk) this.done(entry, { outcome: 'handed-over', freesPlace: false });
      } catch (error) {
        const journaled = chunk.filter((entry) => entry.journaled);
        this.deps.logger.error(
          { err: error, eventIds },
          journaled.length === chunk.length
            ? 'emitted, but could not record it nor hand it over; the journal keeps the ends, written again shortly'
            : 'emitted, but could not record it nor hand it over; the messages are kept and may be published again',
        );
        for (const entry of chunk) if (!entry.journaled) settleOnce(entry, { outcome: 'kept', freesPlace: false });
        if (journaled.length > 0 && !this.closed)
          setTimeout(() => {
            this.pending.push(...journaled);
            this.pump();
          }, JOURNALED_RETRY_MS);
      }
    }
  }

  /** An end recorded or handed over: its publish told, or, journaled, no longer kept for. */
  private done(entry: Waiting, settled: EndSettled): void {
    if (entry.journaled) {
      entry.journaled = false;
      this.unrecorded -= 1;
    }
    settleOnce(entry, settled);
  }

  /** Empties the journal once nothing in it is left unrecorded and no append is on its way. */
  private async emptyJournalIfDone(): Promise<void> {
    const { journal } = this.deps;
    if (journal === undefined || this.unrecorded > 0 || this.appending > 0 || this.unjournaled.length > 0) return;
    try {
      await journal.clear();
    } catch (error) {
      // What it still holds is recorded again by the next process, and found recorded.
      this.deps.logger.warn({ err: error }, 'could not empty the journal of recorded ends');
    }
  }
}

/** Settles the publish waiting for an end, once. */
function settleOnce(entry: Waiting, settled: EndSettled): void {
  entry.settle?.(settled);
  entry.settle = undefined;
}
