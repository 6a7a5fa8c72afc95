import pLimit from 'p-limit';

/**
 * How many packs of failure notices one emitter process publishes at once. Notices answer refused
 * requests; nothing is due at a moment, as events are. One pack at a time lets a tenant's flood of
 * refused requests queue in the delay queue rather than crowd the publishes of events due now, the
 * store's writes and the emulator's fan-out (BENCHMARKS.md, the noisy neighbour). A pack is up to
 * ten notices of one tenant, published at once.
 */
export const NOTICE_PACKS_AT_ONCE = 1;

/** Runs one process's notice packs, at most `packsAtOnce` of them at a time, the rest in arrival order. */
export class NoticePace {
  private readonly limit;

  constructor(packsAtOnce: number = NOTICE_PACKS_AT_ONCE) {
    this.limit = pLimit(packsAtOnce);
  }

  run<T>(send: () => Promise<T>): Promise<T> {
    return this.limit(send);
  }
}
