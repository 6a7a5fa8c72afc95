import type { SchedulerConfig } from '../config.js';
import { bucketsBetween } from '../domain/buckets.js';
import type { LoadingChunk } from '../domain/messages.js';
import type { Clock, EventStore, LoadingQueue, Logger, SchedulerMetrics } from './ports.js';

export interface LoaderDeps {
  readonly config: Pick<
    SchedulerConfig,
    'loaderLookaheadSeconds' | 'loaderTickBudgetSeconds' | 'loaderInitialCatchUpSeconds' | 'loadingChunkSize' | 'bucketSeconds' | 'shardCount'
  >;
  readonly store: Pick<EventStore, 'queryDue' | 'readLoaderCursor' | 'advanceLoaderCursor'>;
  readonly loadingQueue: LoadingQueue;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
}

/** GSI queries a tick keeps in flight: shards of several buckets at once. */
const QUERIES_IN_FLIGHT = 32;

export interface LoaderTickResult {
  readonly fromMs: number;
  /** Events due before this were handed to the loading function (the new cursor). */
  readonly throughMs: number;
  readonly eventsFound: number;
  readonly chunksSent: number;
  /** False when the tick ran out of budget and left the rest to the next tick. */
  readonly caughtUp: boolean;
}

/**
 * One loader tick: finds stored events due before `now + lookahead` that earlier ticks have
 * not handed out, from the cursor on (so missed ticks and backlogs are caught up, oldest
 * first), and fans their ids out to the loading function. Work depends on what is due, not
 * on what is stored. A tick run twice hands out the same ids twice; loading takes each once.
 */
export async function runLoaderTick(deps: LoaderDeps): Promise<LoaderTickResult> {
  const { config, clock, store, logger, metrics } = deps;
  const started = clock.now();
  const untilMs = started + config.loaderLookaheadSeconds * 1000;
  const fromMs = (await store.readLoaderCursor()) ?? started - config.loaderInitialCatchUpSeconds * 1000;
  const deadline = started + config.loaderTickBudgetSeconds * 1000;
  metrics.loaderBacklogSeconds(Math.max(0, (started - fromMs) / 1000));

  let throughMs = fromMs;
  let eventsFound = 0;
  let chunksSent = 0;
  let caughtUp = true;
  const buckets = bucketsBetween(fromMs, untilMs, config);
  // Several buckets per round keep enough queries in flight to catch up quickly after an outage.
  const bucketsPerRound = Math.max(1, Math.ceil(QUERIES_IN_FLIGHT / config.shardCount));
  for (let first = 0; first < buckets.length; first += bucketsPerRound) {
    // The first round always runs, so every tick makes progress.
    if (first > 0 && clock.now() > deadline) {
      caughtUp = false;
      break;
    }
    const round = buckets.slice(first, first + bucketsPerRound);
    const ids: string[] = [];
    await Promise.all(
      round.flatMap((bucket) =>
        bucket.shardKeys.map(async (key) => {
          for await (const page of store.queryDue(key, bucket.startMs, bucket.endMs)) {
            for (const ref of page) ids.push(ref.id);
          }
        }),
      ),
    );
    const chunks: LoadingChunk[] = [];
    for (let i = 0; i < ids.length; i += config.loadingChunkSize) chunks.push({ ids: ids.slice(i, i + config.loadingChunkSize) });
    if (chunks.length > 0) await deps.loadingQueue.send(chunks);
    eventsFound += ids.length;
    chunksSent += chunks.length;
    throughMs = round.at(-1)?.endMs ?? throughMs;
  }
  if (throughMs > fromMs) await store.advanceLoaderCursor(throughMs);
  metrics.count('EventsLoaded', eventsFound);
  metrics.flush();
  const result = { fromMs, throughMs, eventsFound, chunksSent, caughtUp };
  logger.info(result, caughtUp ? 'loader tick done' : 'loader tick out of budget; the next tick goes on');
  return result;
}
