import type { EmissionEnding } from '../domain/emission.js';
import type { DelayQueue, EventStore, Logger, SchedulerMetrics } from './ports.js';

/** What became of an emission's end. */
export type EndOutcome =
  /** Recorded on its event, or found there already: by this delivery (an answer lost), or by another (a duplicate, counted and logged). */
  | 'recorded'
  /** Its write kept failing: handed over through the delay queue to a later delivery, which records it. */
  | 'handed-over'
  /** Neither recorded nor handed over: the message that carried its event must stay, and may be published again. */
  | 'kept';

export interface EndRecorderDeps {
  readonly store: Pick<EventStore, 'endEmissions' | 'releasePlaces'>;
  readonly delayQueue: Pick<DelayQueue, 'sendEnds'>;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
}

/** Ends one hand-over message carries at most: about 200 bytes each, far below SQS's 1 MiB whatever the batch size. */
const ENDS_PER_HAND_OVER = 100;

/**
 * Records ends; returns those still unknown, and adds the places the recorded ends release to
 * `freed` (per tenant, freed later by `releasePlaces`). Two copies emitted at once are counted
 * and logged here.
 */
export async function recordEndings(
  deps: Omit<EndRecorderDeps, 'delayQueue'>,
  endings: readonly EmissionEnding[],
  freed: Map<string, number>,
): Promise<readonly EmissionEnding[]> {
  const recorded = await deps.store.endEmissions(endings);
  for (const { event } of recorded.alreadyEnded) {
    deps.metrics.count('DuplicateEmissions');
    deps.logger.warn({ eventId: event.id, version: event.version }, 'emitted, but another delivery had already ended the event: two copies were emitted at once');
  }
  for (const [tenant, count] of recorded.freed) freed.set(tenant, (freed.get(tenant) ?? 0) + count);
  return recorded.unknown;
}

/**
 * Frees the places recorded ends released, one counter write per tenant. One that cannot be
 * freed is logged and left: the count stays high (never low) until reconciled.
 */
export async function releasePlaces(deps: Omit<EndRecorderDeps, 'delayQueue'>, freed: ReadonlyMap<string, number>): Promise<void> {
  if (freed.size === 0) return;
  let unreleased: readonly { readonly tenant: string; readonly count: number }[];
  try {
    unreleased = await deps.store.releasePlaces(freed);
  } catch (error) {
    deps.logger.warn({ err: error }, 'could not free places in the open-events quota');
    unreleased = [...freed].map(([tenant, count]) => ({ tenant, count }));
  }
  for (const { tenant, count } of unreleased) {
    deps.logger.warn({ tenant, count }, 'ends recorded, but their places in the open-events quota could not be freed; the count stays high until reconciled');
  }
}

interface Waiting {
  readonly ending: EmissionEnding;
  readonly settle: (outcome: EndOutcome) => void;
}

/**
 * Records one emitter batch's ends as their publishes answer: the ends that settle in the same
 * turn of the event loop (those one PublishBatch answered, and any other publish answered with
 * it) go out together in one batched write, at once, without waiting for a write already on its
 * way nor for the batch's other publishes. So an emitter that dies leaves open only the events
 * whose publishes had answered and whose end writes had not returned: theirs come back and are
 * published again. A write that hangs (until the SDK's request timeout) holds back its own ends only.
 *
 * Ends whose writes kept failing are handed over to a later delivery through the delay queue,
 * so that their messages can go and no event is published again for want of its end. Only when
 * that fails too is an end `kept`: its message stays, and its redelivery finds the event open.
 *
 * The places the recorded ends release in their tenants' quotas are freed once the batch is done
 * (`releasePlaces`): one counter write per tenant and batch, however many writes its ends took. A
 * crash before then leaves the counts high, never low.
 */
export class EndRecorder {
  private waiting: Waiting[] = [];
  private writeScheduled = false;
  private readonly freed = new Map<string, number>();

  constructor(private readonly deps: EndRecorderDeps) {}

  /** Records one end with whatever others settled in the same turn; settles once it is recorded, handed over, or neither. */
  record(ending: EmissionEnding): Promise<EndOutcome> {
    return new Promise((settle) => {
      this.waiting.push({ ending, settle });
      this.writeSoon();
    });
  }

  private writeSoon(): void {
    if (this.writeScheduled) return;
    this.writeScheduled = true;
    setImmediate(() => {
      this.writeScheduled = false;
      const taken = this.waiting;
      this.waiting = [];
      void this.write(taken);
    });
  }

  /** Never throws: every end taken is settled. */
  private async write(taken: readonly Waiting[]): Promise<void> {
    const endings = taken.map(({ ending }) => ending);
    let unknown: ReadonlySet<EmissionEnding>;
    try {
      unknown = new Set(await recordEndings(this.deps, endings, this.freed));
    } catch (error) {
      this.deps.logger.warn({ err: error, ends: endings.length }, 'could not record ends; handing them over');
      unknown = new Set(endings);
    }
    for (const entry of taken) if (!unknown.has(entry.ending)) entry.settle('recorded');
    if (unknown.size > 0) await this.handOver(taken.filter(({ ending }) => unknown.has(ending)));
  }

  /** Frees the places of every end recorded so far; call it once the batch's ends are settled. */
  async releasePlaces(): Promise<void> {
    const freed = new Map(this.freed);
    this.freed.clear();
    await releasePlaces(this.deps, freed);
  }

  private async handOver(entries: readonly Waiting[]): Promise<void> {
    for (let from = 0; from < entries.length; from += ENDS_PER_HAND_OVER) {
      const chunk = entries.slice(from, from + ENDS_PER_HAND_OVER);
      const eventIds = chunk.map(({ ending }) => ending.event.id);
      try {
        await this.deps.delayQueue.sendEnds(chunk.map(({ ending }) => ending));
        this.deps.logger.warn({ eventIds }, 'emitted, but could not record it yet; the ends are handed over to be recorded later');
        for (const entry of chunk) entry.settle('handed-over');
      } catch (error) {
        this.deps.logger.error({ err: error, eventIds }, 'emitted, but could not record it nor hand it over; the messages are kept and may be published again');
        for (const entry of chunk) entry.settle('kept');
      }
    }
  }
}
