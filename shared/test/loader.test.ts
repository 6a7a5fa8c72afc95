import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { runLoaderTick, type LoaderDeps } from '../src/app/loader.js';
import { noMetrics, type DueEventRef, type EventStore } from '../src/app/ports.js';
import { bucketShardKeyFor } from '../src/domain/buckets.js';
import type { LoadingChunk } from '../src/domain/messages.js';

const NOW = 1_900_000_020_000;
const config = {
  loaderLookaheadSeconds: 540,
  loaderTickBudgetSeconds: 45,
  loaderInitialCatchUpSeconds: 3600,
  loadingChunkSize: 2,
  bucketSeconds: 60,
  shardCount: 4,
};

/** The loader's view of the table, in memory: stored events by bucket shard, and the cursor. */
class MemoryIndex implements Pick<EventStore, 'queryDue' | 'readLoaderCursor' | 'advanceLoaderCursor'> {
  readonly byShard = new Map<string, DueEventRef[]>();
  cursor: number | undefined;
  queries = 0;

  store(id: string, dueAt: number): void {
    const key = bucketShardKeyFor(id, dueAt, config);
    this.byShard.set(key, [...(this.byShard.get(key) ?? []), { id, dueAt }]);
  }

  async *queryDue(bucketShard: string, fromMs: number, untilMs: number): AsyncIterable<readonly DueEventRef[]> {
    this.queries += 1;
    yield (this.byShard.get(bucketShard) ?? []).filter((ref) => ref.dueAt >= fromMs && ref.dueAt < untilMs);
  }

  async readLoaderCursor(): Promise<number | undefined> {
    return this.cursor;
  }

  async advanceLoaderCursor(toMs: number): Promise<void> {
    if (this.cursor === undefined || this.cursor < toMs) this.cursor = toMs;
  }
}

function setup(clockTimes: number[] = [NOW]) {
  const index = new MemoryIndex();
  const sent: LoadingChunk[] = [];
  let call = 0;
  const deps = {
    config,
    store: index,
    loadingQueue: { send: async (chunks: readonly LoadingChunk[]) => void sent.push(...chunks) },
    clock: { now: () => clockTimes[Math.min(call++, clockTimes.length - 1)] ?? NOW, sleep: async () => {} },
    logger: pino({ level: 'silent' }),
    metrics: noMetrics,
  } satisfies LoaderDeps;
  return { index, sent, deps, ids: () => sent.flatMap((chunk) => chunk.ids).sort() };
}

describe('a loader tick', () => {
  it('hands out, in chunks, the events due from the cursor to now plus the lookahead, and moves the cursor there', async () => {
    const { index, deps, sent, ids } = setup();
    index.cursor = NOW + 480_000;
    index.store('before-cursor', NOW + 479_999);
    index.store('a', NOW + 480_000);
    index.store('b', NOW + 500_000);
    index.store('c', NOW + 539_999);
    index.store('beyond-lookahead', NOW + 540_000);
    const result = await runLoaderTick(deps);
    expect(ids()).toEqual(['a', 'b', 'c']);
    expect(sent.every((chunk) => chunk.ids.length <= 2)).toBe(true);
    expect(result).toMatchObject({ fromMs: NOW + 480_000, throughMs: NOW + 540_000, eventsFound: 3, caughtUp: true });
    expect(index.cursor).toBe(NOW + 540_000);
  });

  it('catches up from where the last tick stopped after missed ticks, overdue events included', async () => {
    const { index, deps, ids } = setup();
    index.cursor = NOW - 3 * 3600_000;
    index.store('overdue', NOW - 2 * 3600_000);
    index.store('due-soon', NOW + 60_000);
    await runLoaderTick(deps);
    expect(ids()).toEqual(['due-soon', 'overdue']);
  });

  it('on a new table, looks back the initial catch-up period', async () => {
    const { index, deps, ids } = setup();
    index.store('stored-before-first-tick', NOW - 1800_000);
    index.store('older-than-the-table', NOW - 7200_000);
    const result = await runLoaderTick(deps);
    expect(result.fromMs).toBe(NOW - 3600_000);
    expect(ids()).toEqual(['stored-before-first-tick']);
  });

  it('leaves the rest to the next tick when out of budget, moving the cursor only past what it handed out', async () => {
    const { index, deps, ids } = setup([NOW, NOW + 46_000]);
    index.cursor = NOW - 3600_000;
    index.store('first-round', NOW - 3600_000 + 1);
    index.store('later', NOW);
    const result = await runLoaderTick(deps);
    expect(result.caughtUp).toBe(false);
    expect(ids()).toEqual(['first-round']);
    expect(index.cursor).toBe(result.throughMs);
    expect(result.throughMs).toBeLessThan(NOW);
  });

  it('queries only the buckets in its range, whatever the table holds later', async () => {
    const { index, deps } = setup();
    index.cursor = NOW + 480_000;
    for (let i = 0; i < 1000; i++) index.store(`far-${i}`, NOW + 86_400_000 + i);
    await runLoaderTick(deps);
    // 60 s from the cursor to the lookahead: one or two one-minute buckets of 4 shards.
    expect(index.queries).toBeLessThanOrEqual(8);
  });
});
