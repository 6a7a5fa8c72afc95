import { randomUUID } from 'node:crypto';
import type { SchedulerConfig } from '../config.js';
import { bucketsBetween } from '../domain/buckets.js';
import type { LoadingChunk } from '../domain/messages.js';
import type { Clock, DueIndex, LoaderCursors, LoaderProgress, LoadingQueue, Logger, SchedulerMetrics } from './ports.js';

export interface LoaderDeps {
  readonly config: Pick<
    SchedulerConfig,
    | 'loaderLookaheadSeconds'
    | 'loaderTickBudgetSeconds'
    | 'loaderInitialCatchUpSeconds'
    | 'loadingChunkSize'
    | 'bucketSeconds'
    | 'shardCount'
    | 'repairAfterSeconds'
  >;
  readonly dueIndex: DueIndex;
  readonly cursors: LoaderCursors;
  readonly loadingQueue: LoadingQueue;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
}

/** GSI queries a tick keeps in flight: shards of several buckets at once. */
const QUERIES_IN_FLIGHT = 32;

/** One pass over the due index: events due in [fromMs, untilMs) fanned out in chunks. */
interface PassResult {
  readonly fromMs: number;
  /** Events due before this were handed out (the new cursor). */
  readonly throughMs: number;
  readonly eventsFound: number;
  readonly chunksSent: number;
  /** False when the tick ran out of budget and left the rest to the next tick. */
  readonly caughtUp: boolean;
}

export interface LoaderTickResult extends PassResult {
  /** The sweep for events still open past `repairAfterSeconds`: what it looked at. */
  readonly repair: PassResult;
}

/**
 * Queries every shard of the buckets in [fromMs, untilMs), oldest first, several buckets at a
 * time, and sends their ids in chunks; stops between rounds once past the deadline.
 */
async function fanOut(
  deps: LoaderDeps,
  pass: {
    readonly cursor: keyof LoaderProgress;
    readonly fromMs: number;
    readonly untilMs: number;
    readonly deadline: number;
    readonly repair: boolean;
  },
): Promise<PassResult> {
  const { config, clock, dueIndex, cursors } = deps;
  const { fromMs, untilMs, deadline, repair } = pass;
  let throughMs = fromMs;
  let eventsFound = 0;
  let chunksSent = 0;
  const buckets = bucketsBetween(fromMs, untilMs, config);
  // Several buckets per round keep enough queries in flight to catch up quickly after an outage.
  const bucketsPerRound = Math.max(1, Math.ceil(QUERIES_IN_FLIGHT / config.shardCount));
  for (let first = 0; first < buckets.length; first += bucketsPerRound) {
    // The first round always runs, so every tick makes progress.
    if (first > 0 && clock.now() > deadline) return { fromMs, throughMs, eventsFound, chunksSent, caughtUp: false };
    const round = buckets.slice(first, first + bucketsPerRound);
    const ids: string[] = [];
    await Promise.all(
      round.flatMap((bucket) =>
        bucket.shardKeys.map(async (key) => {
          for await (const page of dueIndex.query(key, bucket.startMs, bucket.endMs)) {
            for (const ref of page) ids.push(ref.id);
          }
        }),
      ),
    );
    const chunks: LoadingChunk[] = [];
    for (let i = 0; i < ids.length; i += config.loadingChunkSize) {
      // Each chunk owns what it takes, under an id that travels with it (a redriven message keeps it).
      chunks.push({ ids: ids.slice(i, i + config.loadingChunkSize), chunkId: randomUUID(), ...(repair ? { repair } : {}) });
    }
    if (chunks.length > 0) await deps.loadingQueue.send(chunks);
    eventsFound += ids.length;
    chunksSent += chunks.length;
    throughMs = round.at(-1)?.endMs ?? throughMs;
    // Round by round: a tick that fails later keeps what it handed out, and the next goes on from there.
    await cursors.advance(pass.cursor, throughMs);
  }
  return { fromMs, throughMs, eventsFound, chunksSent, caughtUp: true };
}

/**
 * One loader tick. First it finds stored events due before `now + lookahead` that earlier ticks
 * have not handed out, from the cursor on (so missed ticks and backlogs are caught up, oldest
 * first), and fans their ids out to the loading function. Work depends on what is due, not on
 * what is stored. A tick run twice hands out the same ids twice; loading takes each once.
 *
 * Then it sweeps what it handed out `repairAfterSeconds` ago or more, once, from a cursor of its
 * own: the loading function sends again any event still open by then (its loading message was
 * set aside, or its delay-queue copy was lost), so no single lost message loses a stored event.
 */
export async function runLoaderTick(deps: LoaderDeps): Promise<LoaderTickResult> {
  const { config, clock, cursors, logger, metrics } = deps;
  const started = clock.now();
  const deadline = started + config.loaderTickBudgetSeconds * 1000;
  const progress = await cursors.read();
  const fromMs = progress.loadedThroughMs ?? started - config.loaderInitialCatchUpSeconds * 1000;
  // On a new table, where the first tick starts is written before anything else: a tick that
  // fails must not leave the next one to start later, from its own clock.
  if (progress.loadedThroughMs === undefined) await cursors.advance('loadedThroughMs', fromMs);
  metrics.loaderBacklogSeconds(Math.max(0, (started - fromMs) / 1000));

  const load = await fanOut(deps, {
    cursor: 'loadedThroughMs',
    fromMs,
    untilMs: started + config.loaderLookaheadSeconds * 1000,
    deadline,
    repair: false,
  });

  // Never ahead of what was handed out: a loader that is behind sweeps behind it.
  const repairFrom = progress.repairedThroughMs ?? fromMs;
  if (progress.repairedThroughMs === undefined) await cursors.advance('repairedThroughMs', repairFrom);
  const repairUntil = Math.min(started - config.repairAfterSeconds * 1000, load.throughMs);
  const repair = load.caughtUp
    ? await fanOut(deps, { cursor: 'repairedThroughMs', fromMs: repairFrom, untilMs: repairUntil, deadline, repair: true })
    : { fromMs: repairFrom, throughMs: repairFrom, eventsFound: 0, chunksSent: 0, caughtUp: false };

  metrics.count('EventsLoaded', load.eventsFound);
  metrics.flush();
  const result = { ...load, repair };
  logger.info(result, load.caughtUp ? 'loader tick done' : 'loader tick out of budget; the next tick goes on');
  return result;
}
