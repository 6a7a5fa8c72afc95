import { performance } from 'node:perf_hooks';
import { LOCAL_ACCOUNT } from '@adhoc-scheduler/infra';
import { DynamoDbEventListing, type EventsQuery } from '@adhoc-scheduler/shared';
import { round, type ScenarioResult } from '../report/results.js';
import type { ScenarioTargets, TargetCheck } from '../report/targets.js';
import { seedBacklog } from './backlog-seed.js';
import type { RunContext } from './context.js';
import type { ScenarioParams } from './params.js';
import { LOAD_TEST_QUOTAS, type Scenario } from './scenario.js';

/** The tenants whose events are stored; the first one's are listed. */
const TENANTS = ['listed', 'second', 'third'] as const;
/** Every fourth event carries it. */
const LABEL = 'flagged';
const PAGE_SIZE = 100;
/** Pages read of each listing. */
const PAGES = 50;
const HOUR_MS = 3600_000;

const TARGETS = {
  listing: { pageMs: 100, readUnitsPerEvent: 2 },
} satisfies ScenarioTargets;

/** What one page cost: its time, what it returned, and what it read. */
interface PageCost {
  readonly ms: number;
  readonly events: number;
  readonly itemsRead: number;
  readonly readUnits: number;
}

function percentile(values: readonly number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)] as number);
}

/** Pages of 100 of one listing, each timed and metered, following the `next` token. */
async function timePages(
  ctx: RunContext,
  meter: { reads: { items: number; units: number } },
  records: DynamoDbEventListing,
  query: Omit<EventsQuery, 'limit' | 'after'>,
): Promise<PageCost[]> {
  const costs: PageCost[] = [];
  let after: string | undefined;
  for (let page = 0; page < PAGES && Date.now() < ctx.deadline; page += 1) {
    meter.reads = { items: 0, units: 0 };
    const started = performance.now();
    const { events, next } = await records.listEvents(TENANTS[0], { ...query, limit: PAGE_SIZE, after });
    costs.push({ ms: performance.now() - started, events: events.length, itemsRead: meter.reads.items, readUnits: meter.reads.units });
    if (next === undefined) break;
    after = next;
  }
  return costs;
}

function pageSummary(costs: readonly PageCost[]): Record<string, number> {
  const sum = (pick: (cost: PageCost) => number) => costs.reduce((total, cost) => total + pick(cost), 0);
  return {
    pages: costs.length,
    eventsPerPage: round(sum((cost) => cost.events) / Math.max(1, costs.length)),
    pageMsP50: round(
      percentile(
        costs.map((cost) => cost.ms),
        0.5,
      ),
    ),
    pageMsP99: round(
      percentile(
        costs.map((cost) => cost.ms),
        0.99,
      ),
    ),
    itemsReadPerPage: round(sum((cost) => cost.itemsRead) / Math.max(1, costs.length)),
    readUnitsPerPage: round(sum((cost) => cost.readUnits) / Math.max(1, costs.length)),
    // The worst page: what it read for what it returned.
    maxReadUnitsPerEvent: round(Math.max(...costs.map((cost) => cost.readUnits / Math.max(1, cost.events))), 2),
    maxItemsReadPerEvent: round(Math.max(...costs.map((cost) => cost.itemsRead / Math.max(1, cost.events))), 2),
  };
}

function checks(name: string, costs: readonly PageCost[]): TargetCheck[] {
  const { pageMsP99, maxReadUnitsPerEvent } = pageSummary(costs);
  const { pageMs, readUnitsPerEvent } = TARGETS.listing;
  return [
    { name: `${name}: page time p99`, target: `≤ ${pageMs} ms`, actual: `${pageMsP99} ms`, met: (pageMsP99 ?? Infinity) <= pageMs },
    {
      name: `${name}: read units per event returned, worst page`,
      target: `≤ ${readUnitsPerEvent}`,
      actual: String(maxReadUnitsPerEvent),
      met: (maxReadUnitsPerEvent ?? Infinity) <= readUnitsPerEvent,
    },
  ];
}

/**
 * Writes N open events of three tenants straight into the table, every fourth labelled, then
 * times pages of 100 of one tenant's open events through the listing adapter: from now on, by
 * label, and in an hour's range of due times. Each page reports its time, the index entries and
 * records it read, and the read units DynamoDB says it consumed.
 */
async function runListing(ctx: RunContext, params: ScenarioParams): Promise<ScenarioResult> {
  const { service, clients, progress } = ctx;
  const local = service.local;
  if (!local || !clients.dynamodb) throw new Error('the listing scenario needs the local service (it writes into its table)');

  progress.note(`listing: writing ${params.events.toLocaleString('en-US')} open events of ${TENANTS.length} tenants into the table`);
  const seedBar = progress.bar('stored', params.events);
  // Due over the next day, starting an hour out: nothing comes due while the run lists them.
  const fromMs = Date.now() + HOUR_MS;
  const spanMs = 24 * HOUR_MS;
  const seeded = await seedBacklog(clients.dynamodb, local.outputs.tableName, local.config, {
    runId: ctx.runId,
    user: ctx.user,
    count: params.events,
    fromMs,
    spanMs,
    target: service.inputTopicArn.replace(/:[^:]+$/, `:${ctx.runId}-listed`),
    payloadBytes: ctx.measure.payloadBytes,
    onProgress: (written) => seedBar.update(written),
    deadline: ctx.deadline,
    tenants: TENANTS,
    labelsOf: (seq) => (seq % 4 === 0 ? [LABEL] : []),
  });

  const meter = { reads: { items: 0, units: 0 } };
  const records = new DynamoDbEventListing(clients.dynamodb, local.outputs.tableName, {
    shardCount: local.config.shardCount,
    onRead: (read) => {
      meter.reads.items += read.items;
      meter.reads.units += read.capacityUnits;
    },
  });
  progress.note('listing: timing pages of 100');
  const rangeFrom = fromMs + spanMs / 2;
  const listings = {
    open: await timePages(ctx, meter, records, { from: Date.now() }),
    byLabel: await timePages(ctx, meter, records, { from: Date.now(), label: LABEL }),
    byDueRange: await timePages(ctx, meter, records, { from: rangeFrom, to: rangeFrom + HOUR_MS }),
  };
  return {
    title: `listing: pages of ${PAGE_SIZE} of one tenant's open events, with ${params.events.toLocaleString('en-US')} events stored`,
    parameters: {
      events: params.events,
      tenants: TENANTS.length,
      labelled: `every fourth ("${LABEL}")`,
      pageSize: PAGE_SIZE,
      pages: PAGES,
      shardCount: local.config.shardCount,
    },
    delivery: undefined,
    distribution: [],
    details: {
      stored: seeded.written,
      storeSeconds: round(seeded.seconds, 1),
      openFromNow: pageSummary(listings.open),
      byLabel: pageSummary(listings.byLabel),
      byDueRange: pageSummary(listings.byDueRange),
    },
    cost: undefined,
    usage: undefined,
    targets: [
      ...checks('open from now on', listings.open),
      ...checks(`labelled ${LABEL}`, listings.byLabel),
      ...checks('due within an hour', listings.byDueRange),
    ],
  };
}

export const listing: Scenario = {
  description: `writes N open events of three tenants straight into the table (every fourth
labelled), then times pages of 100 of one tenant's open events through the listing:
from now on, by label, by due range; per page its time and read units [1,000,000]`,
  run: runListing,
  defaults: {
    events: 1_000_000,
    quietEvents: 0,
    seconds: 60,
    aheadSeconds: 0,
    windowSeconds: 600,
    loaderIntervalSeconds: 60,
    backlog: 0,
    path: 'far',
    spikeEvents: 0,
    kills: 0,
    faultRate: 0,
  },
  // Nothing is delivered while it measures.
  drainSeconds: 0,
  // It registers its tenants and writes into the service's table.
  service: { startedForIt: true, tenants: TENANTS.map((id) => ({ id, accounts: [LOCAL_ACCOUNT], ...LOAD_TEST_QUOTAS })) },
  targets: TARGETS,
};
