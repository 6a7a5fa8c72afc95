/**
 * Bounds how many of one emitter process's publishes may be answered and not yet settled (their
 * ends recorded, kept in the process's journal, or handed over to a later delivery through the
 * delay queue; see EndWriter): a publish takes a place before it goes out and gives it back once
 * its end is settled or given up. When every place is taken, a publish due waits for one (it is
 * late, never early). So a process that dies publishes again at most `limit` events whose
 * publishes had answered. A limit of 0 bounds nothing.
 */
export class PublishWindow {
  private taken = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  /** Takes a place, waiting for one when all are taken. */
  async take(): Promise<void> {
    if (this.limit === 0) return;
    if (this.taken < this.limit) {
      this.taken += 1;
      return;
    }
    // The place is handed over by `giveBack`, so the count stays as it is.
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** Gives a place back: to the publish that has waited longest, if any. */
  giveBack(): void {
    if (this.limit === 0) return;
    const next = this.waiting.shift();
    if (next) next();
    else this.taken -= 1;
  }
}
