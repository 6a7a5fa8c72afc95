import { randomUUID } from 'node:crypto';
import type { SchedulerConfig } from '../config.js';
import { bucketsBetween } from '../domain/sharding.js';
import type { LoadingChunk } from '../domain/messages.js';
import { tenantShardKeys } from '../domain/table-keys.js';
import { withQuickRetries } from './quick-retry.js';
import { oldestHeld } from './resume.js';
import type {
  DueDirectory,
  DueDirectoryBackfill,
  DueDirectoryBackfillProgress,
  DueIndex,
  LoaderCursor,
  LoaderCursors,
} from './ports/due-index.js';
import type { Clock, Logger, SchedulerMetrics } from './ports/process.js';
import type { LoadingQueue } from './ports/queues.js';
import type { TenantDirectory, TenantPauses } from './ports/tenants.js';

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
  /** Whose stored events are loaded: a tenant removed from the registry has its events left (the emitter would refuse them). */
  readonly tenants: TenantDirectory;
  /** Whose held events are sent on: those of tenants no longer paused, among those marked by a pause. */
  readonly pauses: Pick<TenantPauses, 'paused' | 'pauseMarks' | 'clearPauseMark'>;
  readonly dueIndex: DueIndex;
  /** Which tenants have stored events due in a span: the tenants whose shards a round reads. */
  readonly dueDirectory: Pick<DueDirectory, 'tenantsBetween'>;
  /** Notes what a table holds from before the directory, while it is incomplete. */
  readonly backfill: DueDirectoryBackfill;
  readonly cursors: LoaderCursors;
  readonly loadingQueue: LoadingQueue;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
}

/** GSI queries a tick keeps in flight: shards of several tenants at once. */
export const LOADER_QUERIES_IN_FLIGHT = 32;

/** One partition's part of a round. */
interface Query {
  readonly partitionKey: string;
  readonly fromMs: number;
  readonly untilMs: number;
}

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
  /** Held events of tenants no longer paused, sent on (see sendOnHeld). */
  readonly heldSentOn: number;
}

/**
 * Queries the stored shards of the tenants with events due in [fromMs, untilMs) (see
 * tenantsOfRound), oldest first, several buckets' time at a time, and sends their ids in chunks;
 * stops between rounds once past the deadline.
 */
async function fanOut(
  deps: LoaderDeps,
  pass: {
    readonly cursor: LoaderCursor;
    readonly fromMs: number;
    readonly untilMs: number;
    readonly deadline: number;
    readonly repair: boolean;
    readonly dueDirectoryComplete: boolean;
  },
): Promise<PassResult> {
  const { config, clock, cursors } = deps;
  const { fromMs, untilMs, deadline, repair } = pass;
  let throughMs = fromMs;
  let eventsFound = 0;
  let chunksSent = 0;
  const buckets = bucketsBetween(fromMs, untilMs, config);
  // Several buckets per round: each tenant's shards are read once a round, so a backlog after an outage is caught up in few rounds.
  const bucketsPerRound = Math.max(1, Math.ceil(LOADER_QUERIES_IN_FLIGHT / config.shardCount));
  for (let first = 0; first < buckets.length; first += bucketsPerRound) {
    // The first round always runs, so every tick makes progress.
    if (first > 0 && clock.now() > deadline) return { fromMs, throughMs, eventsFound, chunksSent, caughtUp: false };
    const round = buckets.slice(first, first + bucketsPerRound);
    const roundFrom = round[0]?.startMs ?? fromMs;
    const roundUntil = round.at(-1)?.endMs ?? fromMs;
    const tenants = await tenantsOfRound(deps, pass.dueDirectoryComplete, roundFrom, roundUntil);
    const queries = tenants
      .flatMap((tenant) => tenantShardKeys(tenant, 's', config.shardCount))
      .map((partitionKey): Query => ({ partitionKey, fromMs: roundFrom, untilMs: roundUntil }));
    const ids: string[] = [];
    for (let next = 0; next < queries.length; next += LOADER_QUERIES_IN_FLIGHT) {
      const found = await Promise.all(queries.slice(next, next + LOADER_QUERIES_IN_FLIGHT).map((query) => idsIn(deps, query)));
      for (const partitionIds of found) ids.push(...partitionIds);
    }
    const chunks: LoadingChunk[] = [];
    for (let i = 0; i < ids.length; i += config.loadingChunkSize) {
      // Each chunk owns what it takes, under an id that travels with it (a redriven message keeps it).
      chunks.push({ ids: ids.slice(i, i + config.loadingChunkSize), chunkId: randomUUID(), ...(repair ? { repair } : {}) });
    }
    if (chunks.length > 0) await retried(deps, 'sending chunks', () => deps.loadingQueue.send(chunks));
    eventsFound += ids.length;
    chunksSent += chunks.length;
    throughMs = round.at(-1)?.endMs ?? throughMs;
    // Round by round: a tick that fails later keeps what it handed out, and the next goes on from there.
    await retried(deps, 'advancing the cursor', () => cursors.advance(pass.cursor, throughMs));
  }
  return { fromMs, throughMs, eventsFound, chunksSent, caughtUp: true };
}

/**
 * The tenants whose stored shards a round reads: those the due directory notes for its span that
 * are still registered, so a tick's queries follow the tenants with events due, not the registry's
 * size. While the directory is incomplete (a table that held events before it was kept, not yet
 * migrated), every registered tenant.
 */
async function tenantsOfRound(deps: LoaderDeps, dueDirectoryComplete: boolean, fromMs: number, untilMs: number): Promise<string[]> {
  if (!dueDirectoryComplete) return [...(await retried(deps, 'reading the registry', () => deps.tenants.ids()))];
  const noted = [...(await retried(deps, 'reading the due directory', () => deps.dueDirectory.tenantsBetween(fromMs, untilMs)))];
  const registered = await retried(deps, 'reading the registry', () => deps.tenants.lookup({ ids: noted }));
  return noted.filter((tenant) => registered.tenant(tenant) !== undefined).sort();
}

/** A partition's ids in the query's span, read again from its start when a read fails for a reason a retry may fix. */
async function idsIn(deps: LoaderDeps, query: Query): Promise<string[]> {
  return retried(deps, `reading ${query.partitionKey}`, async () => {
    const ids: string[] = [];
    for await (const page of deps.dueIndex.query(query.partitionKey, query.fromMs, query.untilMs)) {
      for (const ref of page) ids.push(ref.id);
    }
    return ids;
  });
}

/**
 * A step of the tick, tried again at once when it fails for a reason a retry may fix: a tick
 * makes dozens of calls, and one that fails would otherwise leave everything to the next tick.
 * Each step may run twice: reads, a cursor that only moves forward, and chunks that loading
 * takes once whatever their number.
 */
function retried<T>({ clock, logger }: Pick<LoaderDeps, 'clock' | 'logger'>, step: string, run: () => Promise<T>): Promise<T> {
  return withQuickRetries(clock, run, (error) => logger.warn({ err: error, step }, 'loader step failed; trying it again'));
}

/**
 * How long after a tenant's last pause or resume the sweep still reads its held shards before it
 * clears its mark: a hold written just before the resume may reach the index a little later.
 */
export const HELD_SWEEP_GRACE_MS = 5 * 60_000;

/**
 * Sends on the held events of tenants no longer paused, oldest first, a page of each tenant's
 * held shards a tick, as a resume's chunks. A resume's job reads the held partitions a couple of
 * seconds after the pause ends: a hold whose index entry comes later, or a job that is lost,
 * would otherwise leave its events held for good. It runs here, once a tick behind the due
 * second, not in the emitter's path. It reads the tenants a pause marked (TenantPauses.pauseMarks:
 * the only ones that may hold events), so its cost follows the tenants paused lately, not the
 * registry's size; a mark is cleared once its tenant has been resumed for HELD_SWEEP_GRACE_MS and
 * holds nothing. While the due directory is incomplete (a table from before the marks, not yet
 * migrated), it reads every registered tenant.
 */
async function sendOnHeld(deps: LoaderDeps, marksComplete: boolean): Promise<number> {
  const marks = marksComplete ? await retried(deps, 'reading the pause marks', () => deps.pauses.pauseMarks()) : undefined;
  const marked =
    marks ?? (await retried(deps, 'reading the registry', () => deps.tenants.ids())).map((id) => ({ tenant: id, stamp: undefined }));
  const registered = await retried(deps, 'reading the registry', () => deps.tenants.lookup({ ids: marked.map(({ tenant }) => tenant) }));
  const candidates = marked.filter(({ tenant }) => registered.tenant(tenant) !== undefined);
  const paused = await retried(deps, 'reading the pauses', () => deps.pauses.paused(candidates.map(({ tenant }) => tenant)));
  let sent = 0;
  for (const { tenant, stamp } of candidates.filter((candidate) => !paused.has(candidate.tenant))) {
    const held = await retried(deps, `reading ${tenant}'s held events`, () => oldestHeld(deps, tenant, undefined));
    if (held.length === 0) {
      if (stamp !== undefined && deps.clock.now() - stamp >= HELD_SWEEP_GRACE_MS)
        await retried(deps, `clearing ${tenant}'s pause mark`, () => deps.pauses.clearPauseMark({ tenant, stamp }));
      continue;
    }
    await deps.loadingQueue.send([{ ids: held.map(({ id }) => id), chunkId: randomUUID(), resume: true }]);
    deps.logger.warn({ tenant, eventIds: held.map(({ id }) => id) }, 'held events of a tenant no longer paused; sent on');
    sent += held.length;
  }
  return sent;
}

/**
 * How long after the loader first finds the due directory incomplete its backfill starts: by then
 * no function of an earlier version, which stores events without noting them, still runs (Lambda
 * ends an invocation after 15 minutes), so nothing the scan has passed is written unnoted after it.
 */
export const BACKFILL_DELAY_MS = 20 * 60_000;

/**
 * Backfills the due directory and the pause marks (see DueDirectoryBackfill), page after page
 * while the tick's budget lasts, from where the last tick left it; then marks the directory
 * complete, and the next ticks read only the tenants it notes.
 */
async function backfill(deps: LoaderDeps, progress: DueDirectoryBackfillProgress, deadline: number): Promise<void> {
  const { clock, cursors, logger } = deps;
  const { startsAt } = progress;
  if (startsAt === undefined) {
    const starting = { startsAt: clock.now() + BACKFILL_DELAY_MS, from: undefined };
    await retried(deps, 'saving the backfill', () => cursors.saveBackfill(starting));
    logger.info(starting, 'due directory incomplete: its backfill starts then; until it is done, every tenant is read');
    return;
  }
  if (clock.now() < startsAt) return;
  let from = progress.from;
  do {
    const after = from;
    from = await retried(deps, 'backfilling the due directory', () => deps.backfill.page(after));
    if (from === undefined) {
      await retried(deps, 'marking the due directory complete', () => cursors.markDueDirectoryComplete());
      logger.info({}, 'due directory backfilled: each tick now reads the tenants with events due');
      return;
    }
    const next = { startsAt, from };
    await retried(deps, 'saving the backfill', () => cursors.saveBackfill(next));
  } while (clock.now() <= deadline);
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
 * Last, it sends on the held events of tenants no longer paused (see sendOnHeld).
 */
export async function runLoaderTick(deps: LoaderDeps): Promise<LoaderTickResult> {
  const { config, clock, cursors, logger, metrics } = deps;
  const started = clock.now();
  const deadline = started + config.loaderTickBudgetSeconds * 1000;
  const progress = await retried(deps, 'reading the cursors', () => cursors.read());
  const fromMs = progress.loadedThroughMs ?? started - config.loaderInitialCatchUpSeconds * 1000;
  // On a new table, where the first tick starts is written before anything else: a tick that
  // fails must not leave the next one to start later, from its own clock.
  if (progress.loadedThroughMs === undefined) await cursors.advance('loadedThroughMs', fromMs);
  const { dueDirectoryComplete } = progress;
  metrics.loaderBacklogSeconds(Math.max(0, (started - fromMs) / 1000));

  const load = await fanOut(deps, {
    cursor: 'loadedThroughMs',
    fromMs,
    untilMs: started + config.loaderLookaheadSeconds * 1000,
    deadline,
    repair: false,
    dueDirectoryComplete,
  });

  // Never ahead of what was handed out: a loader that is behind sweeps behind it.
  const repairFrom = progress.repairedThroughMs ?? fromMs;
  if (progress.repairedThroughMs === undefined) await cursors.advance('repairedThroughMs', repairFrom);
  const repairUntil = Math.min(started - config.repairAfterSeconds * 1000, load.throughMs);
  const repair = load.caughtUp
    ? await fanOut(deps, {
        cursor: 'repairedThroughMs',
        fromMs: repairFrom,
        untilMs: repairUntil,
        deadline,
        repair: true,
        dueDirectoryComplete,
      })
    : { fromMs: repairFrom, throughMs: repairFrom, eventsFound: 0, chunksSent: 0, caughtUp: false };

  const heldSentOn = await sendOnHeld(deps, dueDirectoryComplete);
  if (!dueDirectoryComplete) await backfill(deps, progress.backfill, deadline);

  metrics.count('EventsLoaded', load.eventsFound);
  metrics.flush();
  const result = { ...load, repair, heldSentOn };
  logger.info(result, load.caughtUp ? 'loader tick done' : 'loader tick out of budget; the next tick goes on');
  return result;
}
