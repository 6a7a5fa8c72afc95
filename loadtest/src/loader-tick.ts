import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createLocalResources, LOCAL_CREDENTIALS, LOCAL_REGION, startEmulators } from '@adhoc-scheduler/infra';
import {
  DEFAULT_QUOTAS,
  DEFAULTS,
  DynamoDbDueDirectory,
  DynamoDbDueDirectoryBackfill,
  DynamoDbDueIndex,
  DynamoDbEventStore,
  DynamoDbLoaderCursors,
  DynamoDbTenantPauses,
  EVENT_STATE,
  LOADER_CURSOR_ID,
  noMetrics,
  requestHashOf,
  runLoaderTick,
  shardOf,
  TABLE,
  TenantRegistry,
  type LoadingChunk,
  type NewEvent,
} from '@adhoc-scheduler/shared';
import { LoadTestUsageError } from './options.js';
import { registryDocument } from './registry.js';

export const LOADER_TICK_USAGE = `Usage: loadtest loader-tick [--tenants N] [--active M] [--events E] [--ticks K] [--data-dir DIR] [--incomplete]

What a loader tick costs with many tenants registered and few with events due: DynamoDB Local
(on disk with --data-dir, else in memory) holds E events of each of M tenants, stored for the
loader and due within the tick's range, written through the event store as ingest writes them.
The loader's tick then runs against it K times with the registry of N tenants, and K times with
a registry of the M active tenants alone, alternately, each from the same cursor; chunks are
counted, not sent. Prints each side's tick time (median, min-max), its DynamoDB requests and the
events it found, and the ratio of the two medians.

  --tenants N    registered tenants                                   [10,000]
  --active M     of them, tenants with events due                     [10]
  --events E     events of each active tenant                         [100]
  --ticks K      ticks on each side                                   [5]
  --data-dir DIR DynamoDB Local keeps the table on disk there         [in memory]
  --incomplete   the due directory is not marked complete: the tick reads every registered
                 tenant, as on a table from before it, not yet backfilled (and as before it)`;

export interface LoaderTickOptions {
  readonly tenants: number;
  readonly active: number;
  readonly events: number;
  readonly ticks: number;
  readonly dataDir: string | undefined;
  readonly incomplete: boolean;
}

export interface TickSide {
  readonly registered: number;
  readonly ticksMs: readonly number[];
  readonly medianMs: number;
  readonly requests: number;
  readonly eventsFound: number;
}

export interface LoaderTickResult {
  readonly active: number;
  readonly events: number;
  readonly many: TickSide;
  readonly few: TickSide;
  readonly ratio: number;
}

export function parseLoaderTickCli(args: readonly string[]): LoaderTickOptions | undefined {
  const { values } = parseArgs({
    args: [...args],
    options: {
      tenants: { type: 'string', default: '10000' },
      active: { type: 'string', default: '10' },
      events: { type: 'string', default: '100' },
      ticks: { type: 'string', default: '5' },
      'data-dir': { type: 'string' },
      incomplete: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return undefined;
  const count = (name: 'tenants' | 'active' | 'events' | 'ticks', max: number): number => {
    const value = Number(values[name]);
    if (!Number.isInteger(value) || value < 1 || value > max)
      throw new LoadTestUsageError(`--${name} must be an integer from 1 to ${max}, got "${values[name]}"`);
    return value;
  };
  const tenants = count('tenants', 1_000_000);
  const active = count('active', tenants);
  return {
    tenants,
    active,
    events: count('events', 10_000),
    ticks: count('ticks', 50),
    dataDir: values['data-dir'],
    incomplete: values.incomplete,
  };
}

/** The loader's lookahead as the defaults make it: the near-path window less one interval. */
const LOOKAHEAD_SECONDS = DEFAULTS.nearPathWindowSeconds - DEFAULTS.loaderIntervalSeconds;

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

export async function runLoaderTickBenchmark(options: LoaderTickOptions): Promise<LoaderTickResult> {
  const emulators = await startEmulators({ dataDir: options.dataDir });
  const raw = new DynamoDBClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: emulators.dynamodbEndpoint });
  let requests = 0;
  raw.middlewareStack.add(
    (next) => (args) => {
      requests += 1;
      return next(args);
    },
    { step: 'initialize', name: 'countRequests' },
  );
  const client = DynamoDBDocumentClient.from(raw, { marshallOptions: { removeUndefinedValues: true } });
  try {
    const { tableName } = await createLocalResources(
      { messaging: emulators.messagingEndpoint, dynamodb: emulators.dynamodbEndpoint },
      { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS },
      `loader-tick-${randomUUID().slice(0, 8)}`,
      { visibilityTimeoutSeconds: 30, emitMaxAgeSeconds: 3600, tenantIds: [], logger: { info: () => {} } },
    );
    const document = registryDocument(options.tenants);
    const activeIds = document.tenants?.slice(0, options.active).map(({ id }) => id) ?? [];
    const start = Date.now();
    await storeEvents(client, tableName, activeIds, options.events, start);
    const registries = {
      many: new TenantRegistry(document, 'scheduler'),
      few: new TenantRegistry({ tenants: document.tenants?.slice(0, options.active) ?? [] }, 'scheduler'),
    };
    const sides = { many: [] as number[], few: [] as number[] };
    const measured = { many: { requests: 0, eventsFound: 0 }, few: { requests: 0, eventsFound: 0 } };
    for (let tick = 0; tick < options.ticks; tick++) {
      // Alternately, each side first in turn.
      for (const side of tick % 2 === 0 ? (['many', 'few'] as const) : (['few', 'many'] as const)) {
        await client.send(new DeleteCommand({ TableName: tableName, Key: { [TABLE.partitionKey]: LOADER_CURSOR_ID } }));
        const cursors = new DynamoDbLoaderCursors(client, tableName);
        await cursors.advance('loadedThroughMs', start);
        await cursors.advance('repairedThroughMs', start - DEFAULTS.repairAfterSeconds * 1000);
        if (!options.incomplete) await cursors.markDueDirectoryComplete();
        const before = requests;
        const began = performance.now();
        const result = await runLoaderTick(loaderDeps(client, tableName, registries[side]));
        sides[side].push(performance.now() - began);
        measured[side] = { requests: requests - before, eventsFound: result.eventsFound };
      }
    }
    const sideOf = (side: 'many' | 'few'): TickSide => ({
      registered: side === 'many' ? options.tenants : options.active,
      ticksMs: sides[side],
      medianMs: median(sides[side]),
      ...measured[side],
    });
    const many = sideOf('many');
    const few = sideOf('few');
    return { active: options.active, events: options.events, many, few, ratio: many.medianMs / few.medianMs };
  } finally {
    client.destroy();
    await emulators.stop();
  }
}

/** `events` far-path events of each tenant, due over the loader's next minutes, written as ingest writes them. */
async function storeEvents(client: DynamoDBDocumentClient, tableName: string, tenants: readonly string[], events: number, now: number) {
  const store = new DynamoDbEventStore(client, tableName);
  for (const tenant of tenants) {
    const entries = Array.from({ length: events }, (_, n): NewEvent => {
      const id = `m-${tenant}-${n}`;
      const event = {
        id,
        tenant,
        user: 'loadtest',
        target: 'arn:aws:sns:us-east-1:000000000000:out',
        payload: 'x',
        // Spread over the loader's lookahead from `now`.
        dueAt: now + 1000 + Math.floor((n / events) * (LOOKAHEAD_SECONDS - 10) * 1000),
        version: 1,
      };
      return {
        event,
        clientId: undefined,
        inputMessageId: id,
        requestHash: requestHashOf(event),
        placement: { state: EVENT_STATE.scheduled, shard: shardOf(id, DEFAULTS) },
        queuedBy: undefined,
        createdBy: 'loadtest',
        quotas: { ...DEFAULT_QUOTAS, maxIngestPerSecond: 1_000_000 },
        now,
        expiresAt: Math.ceil(now / 1000) + 3600,
      };
    });
    for (let first = 0; first < entries.length; first += 100) await store.createMany(entries.slice(first, first + 100));
  }
}

function loaderDeps(client: DynamoDBDocumentClient, tableName: string, tenants: TenantRegistry) {
  const clock = { now: () => Date.now(), sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)) };
  const directory = new DynamoDbDueDirectory(client, tableName, DEFAULTS.retentionSeconds);
  const quiet = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };
  return {
    config: { ...DEFAULTS, loaderLookaheadSeconds: LOOKAHEAD_SECONDS },
    tenants,
    pauses: new DynamoDbTenantPauses(client, tableName),
    dueIndex: new DynamoDbDueIndex(client, tableName),
    dueDirectory: directory,
    backfill: new DynamoDbDueDirectoryBackfill(client, tableName, directory, clock),
    cursors: new DynamoDbLoaderCursors(client, tableName),
    // Counted, not sent: the tick's reads are what is measured.
    loadingQueue: { send: async (_chunks: readonly LoadingChunk[]) => {} },
    clock,
    logger: { ...quiet, child: () => quiet },
    metrics: noMetrics,
  };
}

export function loaderTickSummary(options: LoaderTickOptions, result: LoaderTickResult): string {
  const n = (value: number) => value.toLocaleString('en-US');
  const side = (label: string, tick: TickSide) =>
    `  ${label} ${n(tick.registered)} registered: tick ${tick.medianMs.toFixed(0)} ms (${Math.min(...tick.ticksMs).toFixed(0)}-${Math.max(...tick.ticksMs).toFixed(0)}), ${n(tick.requests)} DynamoDB requests, ${n(tick.eventsFound)} events found`;
  return [
    `loader tick: ${n(result.active)} tenants with ${n(result.events)} events each due, ${options.dataDir === undefined ? 'in memory' : 'on disk'}, ${options.ticks} ticks a side${options.incomplete ? ', the due directory incomplete (every registered tenant read)' : ''}`,
    side('with', result.many),
    side('with', result.few),
    `  ratio of the medians ${result.ratio.toFixed(2)}`,
  ].join('\n');
}
