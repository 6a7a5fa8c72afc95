/**
 * How many packs of failure notices one emitter process publishes at once. Notices answer refused
 * requests; nothing is due at a moment, as events are. One pack at a time lets a tenant's flood of
 * refused requests queue in the delay queue rather than crowd the publishes of events due now, the
 * store's writes and the emulator's fan-out (BENCHMARKS.md, the noisy neighbour). A pack is up to
 * ten notices of one tenant, published at once.
 */
export const NOTICE_PACKS_AT_ONCE = 1;

/**
 * Runs one process's notice packs, at most `packsAtOnce` of them at a time. Those waiting take
 * turns by tenant, each tenant's in the order they came: a pack waits for at most one pack of each
 * other tenant with packs waiting, so one tenant's flood does not hold back another's notices.
 */
export class NoticePace {
  private running = 0;
  /** Waiting packs' starts by tenant, the tenant whose turn is next first. */
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(private readonly packsAtOnce: number = NOTICE_PACKS_AT_ONCE) {}

  async run<T>(tenant: string, send: () => Promise<T>): Promise<T> {
    if (this.running < this.packsAtOnce) this.running += 1;
    // The place is handed over by `next`, so the count stays as it is.
    else await new Promise<void>((start) => this.wait(tenant, start));
    try {
      return await send();
    } finally {
      this.next();
    }
  }

  private wait(tenant: string, start: () => void): void {
    const queue = this.waiting.get(tenant);
    if (queue === undefined) this.waiting.set(tenant, [start]);
    else queue.push(start);
  }

  /** Hands the place to the next tenant's oldest pack, and puts that tenant last; or frees it. */
  private next(): void {
    const turn = this.waiting.entries().next();
    if (turn.done) {
      this.running -= 1;
      return;
    }
    const [tenant, queue] = turn.value;
    const start = queue.shift() as () => void;
    this.waiting.delete(tenant);
    if (queue.length > 0) this.waiting.set(tenant, queue);
    start();
  }
}
