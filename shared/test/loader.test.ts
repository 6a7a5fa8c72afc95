import { describe, expect, it } from 'vitest';
import { BACKFILL_DELAY_MS, HELD_SWEEP_GRACE_MS, runLoaderTick, type LoaderDeps } from '../src/app/loader.js';
import { shardOf } from '../src/domain/sharding.js';
import { EVENT_STATE } from '../src/domain/lifecycle.js';
import { TransientError } from '../src/domain/reasons.js';
import { dueDirectoryPeriodOf, heldShardKey, tenantShardKey } from '../src/domain/table-keys.js';
import { registry, storedRecord } from './factories.js';
import { RecordingLoadingQueue, RecordingLogger, RecordingMetrics } from './fakes.js';
import {
  MemoryDueDirectory,
  MemoryDueDirectoryBackfill,
  MemoryDueIndex,
  MemoryEventStore,
  MemoryLoaderCursors,
  MemoryTenantPauses,
} from './memory-event-store.js';

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

function setup(clockTimes: number[] = [NOW], table = { store: new MemoryEventStore(), cursors: new MemoryLoaderCursors() }) {
  const { store, cursors } = table;
  // A table the local service created: its directory is complete from the start.
  cursors.progress.dueDirectoryComplete = true;
  const dueIndex = new MemoryDueIndex(store);
  const dueDirectory = new MemoryDueDirectory();
  const loadingQueue = new RecordingLoadingQueue();
  const { sent } = loadingQueue;
  let call = 0;
  const logger = new RecordingLogger();
  const backfill = new MemoryDueDirectoryBackfill(store, dueDirectory, () => NOW);
  const deps = {
    config,
    // The public tenant and acme.
    tenants: registry(),
    pauses: new MemoryTenantPauses(store),
    dueIndex,
    dueDirectory,
    backfill,
    cursors,
    loadingQueue,
    clock: { now: () => clockTimes[Math.min(call++, clockTimes.length - 1)] ?? NOW, sleep: async () => {} },
    logger,
    metrics: new RecordingMetrics(),
  } satisfies LoaderDeps;
  /** Stores an event of tenant acme for the loader, due at `dueAt`. */
  const stored = (id: string, dueAt: number) => {
    void dueDirectory.note([{ tenant: 'acme', dueAt }]);
    store.put(storedRecord(id, dueAt, { tenantShard: tenantShardKey('acme', 's', shardOf(id, config)) }));
  };
  const idsOf = (repair: boolean) =>
    sent
      .filter((chunk) => (chunk.repair ?? false) === repair)
      .flatMap((chunk) => chunk.ids)
      .sort();
  return {
    logger,
    store,
    cursors: cursors.progress,
    dueIndex,
    dueDirectory,
    loadingQueue,
    backfill,
    stored,
    table,
    sent,
    deps,
    ids: () => idsOf(false),
    repairIds: () => idsOf(true),
  };
}

/** Does as `run` does, but for its first call, which fails for a reason a retry may fix. */
function failingOnce<A extends unknown[], T>(run: (...args: A) => Promise<T>): (...args: A) => Promise<T> {
  let failed = false;
  return (...args) => {
    if (failed) return run(...args);
    failed = true;
    return Promise.reject(new TransientError('throttled'));
  };
}

describe('a loader tick', () => {
  it('hands out, in chunks, the events due from the cursor to now plus the lookahead, moves the cursor there, and logs what it did', async () => {
    const { cursors, stored, deps, sent, ids, logger } = setup();
    cursors.loadedThroughMs = NOW + 480_000;
    stored('before-cursor', NOW + 479_999);
    stored('a', NOW + 480_000);
    stored('b', NOW + 500_000);
    stored('c', NOW + 539_999);
    stored('beyond-lookahead', NOW + 540_000);
    const result = await runLoaderTick(deps);
    expect(ids()).toEqual(['a', 'b', 'c']);
    expect(sent.every((chunk) => chunk.ids.length <= 2)).toBe(true);
    expect(result).toMatchObject({ fromMs: NOW + 480_000, throughMs: NOW + 540_000, eventsFound: 3, caughtUp: true });
    expect(cursors.loadedThroughMs).toBe(NOW + 540_000);
    expect(logger.at('info')).toEqual([{ level: 'info', fields: result, message: 'loader tick done' }]);
  });

  it('catches up from where the last tick stopped after missed ticks, overdue events included', async () => {
    const { cursors, stored, deps, ids } = setup();
    cursors.loadedThroughMs = NOW - 3 * 3600_000;
    stored('overdue', NOW - 2 * 3600_000);
    stored('due-soon', NOW + 60_000);
    await runLoaderTick(deps);
    expect(ids()).toEqual(['due-soon', 'overdue']);
  });

  it('on a new table, looks back the initial catch-up period', async () => {
    const { stored, deps, ids } = setup();
    stored('stored-before-first-tick', NOW - 1800_000);
    stored('older-than-the-table', NOW - 7200_000);
    const result = await runLoaderTick(deps);
    expect(result.fromMs).toBe(NOW - 3600_000);
    expect(ids()).toEqual(['stored-before-first-tick']);
  });

  it('leaves the rest to the next tick when out of budget, moving the cursor only past what it handed out, and says so', async () => {
    const { cursors, stored, deps, ids, logger } = setup([NOW, NOW + 46_000]);
    cursors.loadedThroughMs = NOW - 3600_000;
    stored('first-round', NOW - 3600_000 + 1);
    stored('later', NOW);
    const result = await runLoaderTick(deps);
    expect(result.caughtUp).toBe(false);
    expect(ids()).toEqual(['first-round']);
    expect(cursors.loadedThroughMs).toBe(result.throughMs);
    expect(result.throughMs).toBeLessThan(NOW);
    expect(logger.at('info')).toEqual([{ level: 'info', fields: result, message: 'loader tick out of budget; the next tick goes on' }]);
  });

  it('goes on round after round to its deadline, the budget after its start, and stops only past it', async () => {
    const { cursors, stored, deps, ids } = setup([NOW, NOW + 45_000]);
    cursors.loadedThroughMs = NOW - 3600_000;
    stored('first-round', NOW - 3600_000 + 1);
    stored('last-round', NOW);
    const result = await runLoaderTick(deps);
    expect(result.caughtUp).toBe(true);
    expect(ids()).toEqual(['first-round', 'last-round']);
  });

  it('reports how far behind the present it starts, what it found and the chunks it sent, its metrics written out once a tick', async () => {
    const behind = setup();
    behind.cursors.loadedThroughMs = NOW - 3 * 3600_000;
    for (const id of ['a', 'b', 'c']) behind.stored(id, NOW - 3600_000);
    expect(await runLoaderTick(behind.deps)).toMatchObject({ eventsFound: 3, chunksSent: 2 });
    expect(behind.deps.metrics.backlogSeconds).toEqual([3 * 3600]);
    expect(behind.deps.metrics.counts.EventsLoaded).toBe(3);
    expect(behind.deps.metrics.flushes).toBe(1);

    // A cursor ahead of the present (the lookahead handed out already) is no backlog.
    const ahead = setup();
    ahead.cursors.loadedThroughMs = NOW + 480_000;
    await runLoaderTick(ahead.deps);
    expect(ahead.deps.metrics.backlogSeconds).toEqual([0]);
  });

  it('queries only the buckets in its range, whatever the table holds later', async () => {
    const { cursors, stored, deps, dueIndex } = setup();
    cursors.loadedThroughMs = NOW + 480_000;
    for (let i = 0; i < 1000; i++) stored(`far-${i}`, NOW + 86_400_000 + i);
    await runLoaderTick(deps);
    // Nothing is noted from the cursor to the lookahead, and no tenant is marked by a pause: no query at all.
    expect(dueIndex.queries).toBe(0);
  });

  it("finds each registered tenant's stored events in the tenant index", async () => {
    const { cursors, store, stored, deps, ids, dueDirectory } = setup();
    cursors.loadedThroughMs = NOW + 480_000;
    stored('acme-event', NOW + 500_000);
    await dueDirectory.note([{ tenant: 'public', dueAt: NOW + 500_000 }]);
    store.put({ ...storedRecord('public-event', NOW + 500_000), tenant: 'public', tenantShard: tenantShardKey('public', 's', 1) });
    await runLoaderTick(deps);
    expect(ids()).toEqual(['acme-event', 'public-event']);
  });

  it('leaves events whose payload is only in the delay queue, and those of a tenant no longer registered', async () => {
    const { cursors, store, deps, ids, dueDirectory } = setup();
    cursors.loadedThroughMs = NOW + 480_000;
    store.put({ ...storedRecord('near-path', NOW + 500_000), state: 'queued', tenantShard: tenantShardKey('acme', 'q', 0) });
    await dueDirectory.note([{ tenant: 'gone', dueAt: NOW + 500_000 }]);
    store.put({ ...storedRecord('of-a-removed-tenant', NOW + 500_000), tenant: 'gone', tenantShard: tenantShardKey('gone', 's', 0) });
    await runLoaderTick(deps);
    expect(ids()).toEqual([]);
  });

  it('keeps what it handed out round by round: a tick that fails halfway leaves the cursor past the rounds it finished', async () => {
    const { cursors, stored, deps, loadingQueue } = setup();
    cursors.loadedThroughMs = NOW - 3600_000;
    stored('first-round', NOW - 3600_000 + 1);
    stored('later-round', NOW - 1800_000);
    loadingQueue.refuseFromCall = 1;
    await expect(runLoaderTick(deps)).rejects.toThrow('SQS down');
    // Eight one-minute buckets a round (32 queries over 4 shards): the fourth round, which holds
    // 'later-round', failed; the three before it were handed out.
    expect(cursors.loadedThroughMs).toBe(NOW - 3600_000 + 3 * 8 * 60_000);
  });

  it('reads again, at once, a partition whose read failed for a reason a retry may fix: one failed call among its queries does not fail the tick', async () => {
    const { cursors, stored, deps, dueIndex, ids, logger } = setup();
    cursors.loadedThroughMs = NOW + 480_000;
    for (const id of ['a', 'b', 'c', 'd', 'e']) stored(id, NOW + 500_000);
    const failedOnce = new Set<string>();
    const flaky: LoaderDeps = {
      ...deps,
      // Each partition's first read fails halfway through, after its first page.
      dueIndex: {
        page: (partitions, after, limit) => dueIndex.page(partitions, after, limit),
        async *query(partition, fromMs, untilMs) {
          for await (const page of dueIndex.query(partition, fromMs, untilMs)) {
            yield page;
            if (!failedOnce.has(partition)) {
              failedOnce.add(partition);
              throw new TransientError('DynamoDB Query failed: throttled');
            }
          }
        },
      },
    };
    const result = await runLoaderTick(flaky);
    // Each event once: a partition read again is read from its start, its first try's ids dropped.
    expect(ids()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(result).toMatchObject({ eventsFound: 5, caughtUp: true });
    expect(cursors.loadedThroughMs).toBe(NOW + 540_000);
    // Each try again is logged, naming the step.
    const retries = logger.lines.filter(({ message }) => message === 'loader step failed; trying it again');
    expect(retries.map(({ fields }) => (fields as { step: string }).step)).toContain(`reading ${tenantShardKey('acme', 's', 0)}`);
  });

  it('fails the tick when a read keeps failing, leaving the cursor where the tick found it', async () => {
    const { cursors, stored, deps } = setup();
    cursors.loadedThroughMs = NOW + 480_000;
    stored('a', NOW + 500_000);
    const down: LoaderDeps = {
      ...deps,
      dueIndex: {
        page: () => Promise.reject(new TransientError('DynamoDB Query failed: down')),
        // biome-ignore lint/correctness/useYield: fails before its first page
        async *query() {
          throw new TransientError('DynamoDB Query failed: down');
        },
      },
    };
    await expect(runLoaderTick(down)).rejects.toThrow('DynamoDB Query failed: down');
    expect(cursors.loadedThroughMs).toBe(NOW + 480_000);
  });

  it('on a new table, writes where its first tick starts before anything else, so a failed first tick does not move the start', async () => {
    const { cursors, deps, stored } = setup();
    // In the first round: its tenant's shards are the first read.
    stored('a', NOW - 3_590_000);
    const failing = {
      ...deps,
      dueIndex: {
        query: () => {
          throw new Error('DynamoDB down');
        },
        page: () => {
          throw new Error('DynamoDB down');
        },
      },
    };
    await expect(runLoaderTick(failing)).rejects.toThrow('DynamoDB down');
    expect(cursors.loadedThroughMs).toBe(NOW - 3600_000);
  });

  it('names every chunk with an id of its own, which the loading function takes the events under', async () => {
    const { cursors, stored, deps, sent } = setup();
    cursors.loadedThroughMs = NOW + 480_000;
    for (const id of ['a', 'b', 'c', 'd', 'e']) stored(id, NOW + 500_000);
    await runLoaderTick(deps);
    expect(sent).toHaveLength(3);
    expect(new Set(sent.map((chunk) => chunk.chunkId)).size).toBe(3);
  });

  it('hands out each event once when the shards outnumber the queries it keeps in flight', async () => {
    const { cursors, store, deps, ids, dueDirectory } = setup();
    // A tenant of 40 shards: 40 partitions a round, read 32 at a time.
    const wide = { ...config, shardCount: 40 };
    cursors.loadedThroughMs = NOW + 480_000;
    const names = Array.from({ length: 30 }, (_, n) => `e${String(n).padStart(2, '0')}`);
    await dueDirectory.note([{ tenant: 'acme', dueAt: NOW + 500_000 }]);
    for (const id of names) store.put(storedRecord(id, NOW + 500_000, { tenantShard: tenantShardKey('acme', 's', shardOf(id, wide)) }));
    const result = await runLoaderTick({ ...deps, config: wide });
    expect(ids()).toEqual(names);
    expect(result.eventsFound).toBe(30);
  });

  it('is caught up when its last round ends past the deadline: nothing of its range is left, so it sweeps and says it is done', async () => {
    // Every read of the clock after the tick's start is a second past its budget.
    const { cursors, stored, deps, ids, repairIds, logger } = setup([NOW, NOW + 46_000]);
    // Eight one-minute buckets to the lookahead: one round.
    cursors.loadedThroughMs = NOW + 60_000;
    cursors.repairedThroughMs = NOW - 400_000;
    stored('due', NOW + 120_000);
    stored('overdue', NOW - 350_000);
    const result = await runLoaderTick(deps);
    expect(result.caughtUp).toBe(true);
    expect(ids()).toEqual(['due']);
    expect(repairIds()).toEqual(['overdue']);
    expect(logger.at('info').map(({ message }) => message)).toEqual(['loader tick done']);
  });

  it('writes each cursor only to move it on: a table whose cursors are set gets no write of where they stand', async () => {
    const { cursors, deps } = setup();
    cursors.loadedThroughMs = NOW + 480_000;
    cursors.repairedThroughMs = NOW - 360_000;
    const writes: [string, number][] = [];
    const advance = deps.cursors.advance.bind(deps.cursors);
    deps.cursors.advance = async (cursor, toMs) => {
      writes.push([cursor, toMs]);
      await advance(cursor, toMs);
    };
    await runLoaderTick(deps);
    // One round each: the lookahead's last minute, and the sweep's one minute.
    expect(writes).toEqual([
      ['loadedThroughMs', NOW + 540_000],
      ['repairedThroughMs', NOW - 300_000],
    ]);
  });

  it.each<[string, (deps: LoaderDeps) => void]>([
    ['reading the cursors', ({ cursors }) => (cursors.read = failingOnce(cursors.read.bind(cursors)))],
    ['sending chunks', ({ loadingQueue }) => (loadingQueue.send = failingOnce(loadingQueue.send.bind(loadingQueue)))],
    ['advancing the cursor', ({ cursors }) => (cursors.advance = failingOnce(cursors.advance.bind(cursors)))],
    ['reading the pauses', ({ pauses }) => ((pauses as MemoryTenantPauses).paused = failingOnce(pauses.paused.bind(pauses)))],
    [
      "reading acme's held events",
      ({ dueIndex }) => {
        const page = dueIndex.page.bind(dueIndex);
        const acmeFails = failingOnce(page);
        dueIndex.page = (partitions, after, limit) =>
          partitions.includes(heldShardKey('acme', 0)) ? acmeFails(partitions, after, limit) : page(partitions, after, limit);
      },
    ],
  ])('tries the step of %s again at once when it fails for a reason a retry may fix, and names it in its warning', async (step, flaky) => {
    const { cursors, stored, deps, ids, logger, store } = setup();
    cursors.loadedThroughMs = NOW + 480_000;
    cursors.repairedThroughMs = NOW - 360_000;
    stored('a', NOW + 500_000);
    // Resumed a moment ago: its held shards are read.
    store.pauseMarks.set('acme', NOW - 1000);
    flaky(deps);
    const result = await runLoaderTick(deps);
    expect(ids()).toEqual(['a']);
    expect(result).toMatchObject({ eventsFound: 1, caughtUp: true });
    expect(cursors).toMatchObject({ loadedThroughMs: NOW + 540_000, repairedThroughMs: NOW - 300_000 });
    expect(logger.at('warn')).toEqual([
      { level: 'warn', fields: { err: new TransientError('throttled'), step }, message: 'loader step failed; trying it again' },
    ]);
  });
});

describe("the loader's sweep", () => {
  it('sends, once, as repair chunks, the stored events due from its cursor to repairAfterSeconds ago', async () => {
    const { cursors, stored, deps, repairIds, table } = setup();
    cursors.loadedThroughMs = NOW + 480_000;
    cursors.repairedThroughMs = NOW - 400_000;
    stored('before-the-sweep-cursor', NOW - 400_001);
    stored('overdue-a', NOW - 400_000);
    stored('overdue-b', NOW - 300_001);
    stored('not-yet', NOW - 300_000);
    const result = await runLoaderTick(deps);
    expect(repairIds()).toEqual(['overdue-a', 'overdue-b']);
    expect(result.repair).toMatchObject({ fromMs: NOW - 400_000, throughMs: NOW - 300_000, eventsFound: 2 });
    expect(cursors.repairedThroughMs).toBe(NOW - 300_000);

    const again = setup([NOW], table);
    await runLoaderTick(again.deps);
    expect(again.repairIds()).toEqual([]);
  });

  it('on a new table, starts where the loader started, written before anything else: a first tick out of budget sweeps nothing and moves nothing', async () => {
    const { cursors, stored, deps, repairIds } = setup([NOW, NOW + 46_000]);
    stored('first-round', NOW - 3600_000 + 1);
    const result = await runLoaderTick(deps);
    expect(result.caughtUp).toBe(false);
    expect(repairIds()).toEqual([]);
    expect(result.repair).toEqual({ fromMs: NOW - 3600_000, throughMs: NOW - 3600_000, eventsFound: 0, chunksSent: 0, caughtUp: false });
    expect(cursors.repairedThroughMs).toBe(NOW - 3600_000);
  });

  it('never sweeps ahead of what the loader has handed out', async () => {
    const { cursors, stored, deps, repairIds } = setup([NOW, NOW + 46_000]);
    cursors.loadedThroughMs = NOW - 3600_000;
    cursors.repairedThroughMs = NOW - 3600_000;
    stored('not-loaded-yet', NOW - 1800_000);
    const result = await runLoaderTick(deps);
    expect(result.caughtUp).toBe(false);
    expect(repairIds()).toEqual([]);
    expect(cursors.repairedThroughMs).toBe(NOW - 3600_000);
  });

  it('sends on, as a resume does, the held events of a tenant no longer paused, whenever they were held, and none of a paused one', async () => {
    const { store, deps, sent, logger } = setup();
    const held = (id: string, tenant: string, dueAt: number) =>
      store.put({
        ...storedRecord(id, dueAt, { tenantShard: heldShardKey(tenant, shardOf(id, config)) }),
        tenant,
        state: EVENT_STATE.held,
      });
    // Held just before acme's resume, its index entry too late for the resume's job: stranded, but for this pass.
    const operator = { owner: 'operator', name: 'operator jo' } as const;
    await deps.pauses.pause('acme', operator, { pausedAt: NOW - 86_400_000, note: undefined });
    held('acme-stranded', 'acme', NOW - 86_400_000);
    await deps.pauses.resume('acme', operator, NOW - 1000);
    held('public-held', 'public', NOW - 60_000);
    await deps.pauses.pause('public', { owner: 'operator', name: 'operator jo' }, { pausedAt: NOW - 120_000, note: undefined });

    const result = await runLoaderTick(deps);
    expect(result.heldSentOn).toBe(1);
    expect(sent.filter((chunk) => chunk.resume)).toEqual([{ ids: ['acme-stranded'], chunkId: expect.any(String), resume: true }]);
    // Which tenant's events, and which: what an operator looks for after a resume.
    expect(logger.at('warn')).toEqual([
      {
        level: 'warn',
        fields: { tenant: 'acme', eventIds: ['acme-stranded'] },
        message: 'held events of a tenant no longer paused; sent on',
      },
    ]);
  });
});

describe('the due directory and the pause marks: a tick costs what is due, not who is registered', () => {
  /** `registered` tenants (t00000, t00001, …), of which the first `active` have one event due in each of the next minutes. */
  async function tickWith(registered: number, active: number) {
    const tenants = Array.from({ length: registered }, (_, n) => ({
      id: `t${String(n).padStart(5, '0')}`,
      accounts: [String(100_000_000_000 + n)],
    }));
    const { cursors, store, dueDirectory, dueIndex, deps, ids } = setup();
    cursors.loadedThroughMs = NOW;
    cursors.repairedThroughMs = NOW - 300_000;
    cursors.dueDirectoryComplete = true;
    for (const { id: tenant } of tenants.slice(0, active)) {
      for (let minute = 1; minute <= 8; minute++) {
        const id = `${tenant}-${minute}`;
        const dueAt = NOW + minute * 60_000;
        await dueDirectory.note([{ tenant, dueAt }]);
        store.put({ ...storedRecord(id, dueAt, { tenantShard: tenantShardKey(tenant, 's', shardOf(id, config)) }), tenant });
      }
    }
    const result = await runLoaderTick({ ...deps, tenants: registry({ tenants }) });
    return { result, queries: dueIndex.queries, ids: ids() };
  }

  it('reads the shards of the tenants noted for each round only: 10 active of 10,000 registered cost the queries 10 of 10 do', async () => {
    const few = await tickWith(10, 10);
    const many = await tickWith(10_000, 10);
    expect(many.ids).toEqual(few.ids);
    expect(many.ids).toHaveLength(80);
    expect(many.queries).toBe(few.queries);
    // Two rounds of four minutes, each reading the ten tenants' four shards.
    expect(many.queries).toBe(2 * 10 * config.shardCount);
  });

  it('follows the directory once it is complete: a stored event whose tenant was not noted is not read (every write that stores one notes it first)', async () => {
    const { cursors, store, deps, ids } = setup();
    cursors.loadedThroughMs = NOW;
    cursors.dueDirectoryComplete = true;
    store.put(storedRecord('unnoted', NOW + 60_000, { tenantShard: tenantShardKey('acme', 's', shardOf('unnoted', config)) }));
    await runLoaderTick(deps);
    expect(ids()).toEqual([]);
  });

  it('reads every registered tenant while the directory is incomplete, and schedules its backfill BACKFILL_DELAY_MS on', async () => {
    const { cursors, store, deps, ids, dueDirectory, logger, backfill } = setup();
    cursors.loadedThroughMs = NOW;
    cursors.dueDirectoryComplete = false;
    store.put(storedRecord('unnoted', NOW + 60_000, { tenantShard: tenantShardKey('acme', 's', shardOf('unnoted', config)) }));
    await runLoaderTick(deps);
    expect(ids()).toEqual(['unnoted']);
    expect(dueDirectory.reads).toBe(0);
    expect(cursors.backfill).toEqual({ startsAt: NOW + BACKFILL_DELAY_MS, from: undefined });
    expect(backfill.pages).toBe(0);
    expect(logger.at('info').map(({ message }) => message)).toContain(
      'due directory incomplete: its backfill starts then; until it is done, every tenant is read',
    );
  });

  it('backfills once its time has come, page after page from where it stopped, then marks the directory complete', async () => {
    const { cursors, store, deps, dueDirectory, backfill } = setup();
    cursors.loadedThroughMs = NOW;
    cursors.dueDirectoryComplete = false;
    cursors.backfill = { startsAt: NOW, from: 'b' };
    for (const [id, dueAt] of [
      ['a', NOW + 60_000],
      ['b', NOW + 120_000],
      ['c', NOW + 400_000],
      ['d', NOW + 900_000],
      ['e', NOW + 960_000],
    ] as const)
      store.put(storedRecord(id, dueAt, { tenantShard: tenantShardKey('acme', 's', shardOf(id, config)) }));
    store.put({
      ...storedRecord('held', NOW - 60_000, { tenantShard: heldShardKey('public', 0) }),
      tenant: 'public',
      state: EVENT_STATE.held,
    });
    await runLoaderTick(deps);
    // c, d, e and held, two a page: what a scan from b reads; a and b were noted by the ticks before.
    expect(backfill.pages).toBe(2);
    expect(cursors.dueDirectoryComplete).toBe(true);
    expect([...dueDirectory.noted.keys()].sort()).toEqual(
      [...new Set([NOW + 400_000, NOW + 900_000, NOW + 960_000].map(dueDirectoryPeriodOf))].sort(),
    );
    expect([...store.pauseMarks.keys()]).toEqual(['public']);
  });

  it("waits for the backfill's time, and stops between pages once past its budget, keeping where it stopped", async () => {
    const early = setup();
    early.cursors.loadedThroughMs = NOW;
    early.cursors.dueDirectoryComplete = false;
    early.cursors.backfill = { startsAt: NOW + 1, from: undefined };
    early.store.put(storedRecord('a', NOW + 60_000, { tenantShard: tenantShardKey('acme', 's', 0) }));
    await runLoaderTick(early.deps);
    expect(early.backfill.pages).toBe(0);

    // Every read of the clock after the tick's start is past its budget: one page, then it stops.
    const late = setup([NOW, NOW + 46_000]);
    late.cursors.loadedThroughMs = NOW;
    late.cursors.dueDirectoryComplete = false;
    late.cursors.backfill = { startsAt: NOW, from: undefined };
    for (const id of ['a', 'b', 'c', 'd']) late.store.put(storedRecord(id, NOW + 60_000, { tenantShard: tenantShardKey('acme', 's', 0) }));
    await runLoaderTick(late.deps);
    expect(late.backfill.pages).toBe(1);
    expect(late.cursors.backfill).toEqual({ startsAt: NOW, from: 'b' });
    expect(late.cursors.dueDirectoryComplete).toBe(false);
  });

  it('leaves the events of a noted tenant no longer registered', async () => {
    const { cursors, store, deps, ids, dueDirectory } = setup();
    cursors.loadedThroughMs = NOW;
    cursors.dueDirectoryComplete = true;
    await dueDirectory.note([{ tenant: 'gone', dueAt: NOW + 60_000 }]);
    store.put({
      ...storedRecord('gone-1', NOW + 60_000, { tenantShard: tenantShardKey('gone', 's', shardOf('gone-1', config)) }),
      tenant: 'gone',
    });
    await runLoaderTick(deps);
    expect(ids()).toEqual([]);
  });

  it('reads only the held shards of tenants a pause marked, and clears a mark once its tenant has been resumed for the grace and holds nothing', async () => {
    const { cursors, store, deps, dueIndex } = setup();
    cursors.loadedThroughMs = NOW;
    cursors.dueDirectoryComplete = true;
    const operator = { owner: 'operator', name: 'operator jo' } as const;
    await deps.pauses.pause('acme', operator, { pausedAt: NOW - 3_600_000, note: undefined });
    await deps.pauses.resume('acme', operator, NOW - HELD_SWEEP_GRACE_MS);
    await deps.pauses.pause('public', operator, { pausedAt: NOW - 3_600_000, note: undefined });
    await deps.pauses.resume('public', operator, NOW - HELD_SWEEP_GRACE_MS + 1);
    const tenants = [
      { id: 'acme', accounts: ['111111111111'] },
      ...Array.from({ length: 1000 }, (_, n) => ({ id: `t${n}`, accounts: [String(200_000_000_000 + n)] })),
    ];
    await runLoaderTick({ ...deps, tenants: registry({ tenants }) });
    // One page of the held shards of each marked tenant: none of the thousand never paused.
    expect(dueIndex.queries).toBe(2 * config.shardCount);
    // acme was resumed the grace ago and holds nothing: its mark goes. The public tenant's stays until its grace is over.
    expect([...store.pauseMarks.keys()]).toEqual(['public']);
  });

  it('keeps the mark of a tenant paused again, or still holding events', async () => {
    const { cursors, store, deps } = setup();
    cursors.loadedThroughMs = NOW;
    cursors.dueDirectoryComplete = true;
    const operator = { owner: 'operator', name: 'operator jo' } as const;
    await deps.pauses.pause('acme', operator, { pausedAt: NOW - 3_600_000, note: undefined });
    await deps.pauses.pause('public', operator, { pausedAt: NOW - 3_600_000, note: undefined });
    await deps.pauses.resume('public', operator, NOW - 3_000_000);
    store.put({
      ...storedRecord('public-held', NOW - 3_500_000, { tenantShard: heldShardKey('public', shardOf('public-held', config)) }),
      tenant: 'public',
      state: EVENT_STATE.held,
    });
    const result = await runLoaderTick(deps);
    expect(result.heldSentOn).toBe(1);
    expect([...store.pauseMarks.keys()].sort()).toEqual(['acme', 'public']);
  });
});
