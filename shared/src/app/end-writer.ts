import type { EmissionEnding } from '../domain/emission.js';
import { DYNAMODB_TRANSACTION_ITEMS } from '../domain/limits.js';
import type { DelayQueue, EndsRecorded, EventStore, Logger, SchedulerMetrics } from './ports.js';

/** What became of an emission's end. */
export type EndOutcome =
  /** Recorded on its event, or found there already: by this delivery (an answer lost), or by another (a duplicate, counted and logged). */
  | 'recorded'
  /** Its write kept failing: handed over through the delay queue to a later delivery, which records it. */
  | 'handed-over'
  /** Neither recorded nor handed over: the message that carried its event must stay, and may be published again. */
  | 'kept';

export interface EndSettled {
  readonly outcome: EndOutcome;
  /** The write that recorded it applied it here: the place it held in its tenant's open events is to be freed. */
  readonly freesPlace: boolean;
}

export interface EndWriterDeps {
  readonly store: Pick<EventStore, 'endEmissions'>;
  readonly delayQueue: Pick<DelayQueue, 'sendEnds'>;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
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

/** Records ends; two copies emitted at once are counted and logged here. */
export async function recordEndings(deps: Omit<EndWriterDeps, 'delayQueue'>, endings: readonly EmissionEnding[]): Promise<EndsRecorded> {
  const recorded = await deps.store.endEmissions(endings);
  for (const { event } of recorded.alreadyEnded) {
    deps.metrics.count('DuplicateEmissions');
    deps.logger.warn(
      { eventId: event.id, version: event.version },
      'emitted, but another delivery had already ended the event: two copies were emitted at once',
    );
  }
  return recorded;
}

interface Waiting {
  readonly ending: EmissionEnding;
  readonly settle: (settled: EndSettled) => void;
  /** When it was handed to the writer (Date.now()): how long it has lingered. */
  readonly at: number;
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
 * Ends whose writes kept failing are handed over through the delay queue, so that their messages can go
 * and no event is published again for want of its end. Only when that fails too is an end
 * `kept`: its message stays, and its redelivery finds the event open.
 */
export class EndWriter {
  private pending: Waiting[] = [];
  private writing = 0;
  private pumpScheduled = false;
  private lingerTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly lingerMs: number;

  constructor(
    private readonly deps: EndWriterDeps,
    { lingerMs = 0 }: EndWriterOptions = {},
  ) {
    this.lingerMs = lingerMs;
  }

  /** Records one end, with whatever others are waiting; settles once it is recorded, handed over, or neither. */
  record(ending: EmissionEnding): Promise<EndSettled> {
    return new Promise((settle) => {
      this.pending.push({ ending, settle, at: Date.now() });
      this.pumpSoon();
    });
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

  /** Whether the ends waiting should go now: a write's worth, or the oldest has lingered long enough. */
  private ripe(): boolean {
    const [oldest] = this.pending;
    return oldest !== undefined && (this.pending.length >= ENDS_PER_WRITE || Date.now() - oldest.at >= this.lingerMs);
  }

  private pump(): void {
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
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
      this.lingerTimer = setTimeout(() => this.pump(), oldest.at + this.lingerMs - Date.now());
  }

  /** Never throws: every end taken is settled. */
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
    for (const entry of taken) if (!unknown.has(entry.ending)) entry.settle({ outcome: 'recorded', freesPlace: applied.has(entry.ending) });
    if (unknown.size > 0) await this.handOver(taken.filter(({ ending }) => unknown.has(ending)));
  }

  /** Never throws: every end given is settled, handed over or kept. */
  private async handOver(entries: readonly Waiting[]): Promise<void> {
    for (let from = 0; from < entries.length; from += ENDS_PER_HAND_OVER) {
      const chunk = entries.slice(from, from + ENDS_PER_HAND_OVER);
      const eventIds = chunk.map(({ ending }) => ending.event.id);
      try {
        await this.deps.delayQueue.sendEnds(chunk.map(({ ending }) => ending));
        this.deps.logger.warn({ eventIds }, 'emitted, but could not record it yet; the ends are handed over to be recorded later');
        for (const entry of chunk) entry.settle({ outcome: 'handed-over', freesPlace: false });
      } catch (error) {
        this.deps.logger.error(
          { err: error, eventIds },
          'emitted, but could not record it nor hand it over; the messages are kept and may be published again',
        );
        for (const entry of chunk) entry.settle({ outcome: 'kept', freesPlace: false });
      }
    }
  }
}
