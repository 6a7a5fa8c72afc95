import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { runLoaderTick, type LoaderDeps } from '../src/app/loader.js';
import { noMetrics } from '../src/adapters/emf-metrics.js';
import type { DueEventRef, EventStore, LoaderCursors } from '../src/app/ports.js';
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
  repairAfterSeconds: 300,
};

/** The loader's view of the table, in memory: stored events by bucket shard, and the cursor. */
class MemoryIndex implements Pick<EventStore, 'queryDue' | 'readLoaderCursors' | 'advanceLoaderCursor'> {
  readonly byShard = new Map<string, DueEventRef[]>();
  cursor: number | undefined;
  repairCursor: number | undefined;
  queries = 0;

  store(id: string, dueAt: number): void {
    const key = bucketShardKeyFor(id, dueAt, config);
    this.byShard.set(key, [...(this.byShard.get(key) ?? []), { id, dueAt }]);
  }

  async *queryDue(bucketShard: string, fromMs: number, untilMs: number): AsyncIterable<readonly DueEventRef[]> {
    this.queries += 1;
    yield (this.byShard.get(bucketShard) ?? []).filter((ref) => ref.dueAt >= fromMs && ref.dueAt < untilMs);
  }

  async readLoaderCursors(): Promise<LoaderCursors> {
    return { loadedThroughMs: this.cursor, repairedThroughMs: this.repairCursor };
  }

  async advanceLoaderCursor(cursor: keyof LoaderCursors, toMs: number): Promise<void> {
    if (cursor === 'loadedThroughMs' && (this.cursor === undefined || this.cursor < toMs)) this.cursor = toMs;
    if (cursor === 'repairedThroughMs' && (this.repairCursor === undefined || this.repairCursor < toMs)) this.repairCursor = toMs;
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
  const idsOf = (repair: boolean) =>
    sent
      .filter((chunk) => (chunk.repair ?? false) === repair)
      .flatMap((chunk) => chunk.ids)
      .sort();
  return { index, sent, deps, ids: () => idsOf(false), repairIds: () => idsOf(true) };
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

  it('keeps what it handed out round by round: a tick that fails halfway leaves the cursor past the rounds it finished', async () => {
    const { index, deps } = setup();
    index.cursor = NOW - 3600_000;
    index.store('first-round', NOW - 3600_000 + 1);
    index.store('later-round', NOW - 1800_000);
    let sends = 0;
    const failing = {
      ...deps,
      loadingQueue: {
        send: async () => {
          if (sends++ > 0) throw new Error('SQS down');
        },
      },
    };
    await expect(runLoaderTick(failing)).rejects.toThrow('SQS down');
    // Eight one-minute buckets a round (32 queries over 4 shards): the fourth round, which holds
    // 'later-round', failed; the three before it were handed out.
    expect(index.cursor).toBe(NOW - 3600_000 + 3 * 8 * 60_000);
  });

  it('on a new table, writes where its first tick starts before anything else, so a failed first tick does not move the start', async () => {
    const { index, deps } = setup();
    const failing = {
      ...deps,
      store: Object.assign(index, {
        queryDue: () => {
          throw new Error('DynamoDB down');
        },
      }),
    };
    await expect(runLoaderTick(failing)).rejects.toThrow('DynamoDB down');
    expect(index.cursor).toBe(NOW - 3600_000);
  });

  it('names every chunk with an id of its own, which the loading function takes the events under', async () => {
    const { index, deps, sent } = setup();
    index.cursor = NOW + 480_000;
    for (const id of ['a', 'b', 'c', 'd', 'e']) index.store(id, NOW + 500_000);
    await runLoaderTick(deps);
    expect(sent).toHaveLength(3);
    expect(new Set(sent.map((chunk) => chunk.chunkId)).size).toBe(3);
  });
});

describe("the loader's sweep", () => {
  it('sends, once, as repair chunks, the stored events due from its cursor to repairAfterSeconds ago', async () => {
    const { index, deps, repairIds } = setup();
    index.cursor = NOW + 480_000;
    index.repairCursor = NOW - 400_000;
    index.store('before-the-sweep-cursor', NOW - 400_001);
    index.store('overdue-a', NOW - 400_000);
    index.store('overdue-b', NOW - 300_001);
    index.store('not-yet', NOW - 300_000);
    const result = await runLoaderTick(deps);
    expect(repairIds()).toEqual(['overdue-a', 'overdue-b']);
    expect(result.repair).toMatchObject({ fromMs: NOW - 400_000, throughMs: NOW - 300_000, eventsFound: 2 });
    expect(index.repairCursor).toBe(NOW - 300_000);

    const again = setup();
    Object.assign(again.index, { cursor: index.cursor, repairCursor: index.repairCursor, byShard: index.byShard });
    await runLoaderTick(again.deps);
    expect(again.repairIds()).toEqual([]);
  });

  it('never sweeps ahead of what the loader has handed out', async () => {
    const { index, deps, repairIds } = setup([NOW, NOW + 46_000]);
    index.cursor = NOW - 3600_000;
    index.repairCursor = NOW - 3600_000;
    index.store('not-loaded-yet', NOW - 1800_000);
    const result = await runLoaderTick(deps);
    expect(result.caughtUp).toBe(false);
    expect(repairIds()).toEqual([]);
    expect(index.repairCursor).toBe(NOW - 3600_000);
  });
});
