import {
  addCounts,
  DEFAULTS,
  describeCounts,
  DynamoDbEventListing,
  DynamoDbQuotaCounters,
  DynamoDbRefusalLog,
  DynamoDbTenantRemovals,
  NO_COUNTS,
  PUBLIC_TENANT_ID,
  registrationRefusal,
  tenantRemoval,
  type BulkCancelCounts,
  type BulkCancelJob,
  type TenantRemoval,
} from '@adhoc-scheduler/shared';
import { setTimeout as sleep } from 'node:timers/promises';
import { commandLine, LOCATION_OPTIONS, onePositional } from './arguments.js';
import { runBulkCancel } from './bulk-cancel-command.js';
import { AdminError } from './errors.js';
import { count, type Output } from './format.js';
import { locationOf, withTable, type Location } from './location.js';
import { tenantPlace, type TenantPlace } from './tenant-place.js';
import { EVENT_SOURCES } from '../queues.js';
import { REMOVED_TENANT_LEFTOVERS } from './removed-tenants.js';
import { USAGE } from './usage.js';

/**
 * Removing a tenant from the local service, and registering a removed id again. The steps keep
 * every guarantee of the tenant's events: none is left open behind an unregistered tenant (its
 * emission would fail), and none is lost to a removal that stops half-way (a second run goes on).
 */

/** How long the cancels may go on: time for the events due within the change cutoff to be emitted. */
const SETTLE_MS = (DEFAULTS.changeCutoffSeconds + 25) * 1000;
/** How often the open events are counted while waiting for them to end. */
const RECOUNT_MS = 1000;
/** Counts after the tenant is unregistered at most, each a while after the last, cancelling what the one before found. */
const LATE_ROUNDS = 3;
/**
 * How long the running service may go on taking the tenant's requests after its registry's table
 * no longer names it: until its functions' cache reads the registry again (the default
 * SCHEDULER_REGISTRY_MAX_AGE_MS), a second allowed for the read, and ingest's batching window after.
 */
const REGISTRY_IN_FORCE_MS = DEFAULTS.registryMaxAgeMs + 1000 + EVENT_SOURCES.ingest.batchingWindowSeconds * 1000;

/** A bulk cancel of every open event and series of the tenant, waited for. */
function cancelEveryOpenEvent(location: Location, tenant: string, progress: (line: string) => void): Promise<BulkCancelJob> {
  return runBulkCancel(location, { tenant, label: undefined, dueBefore: undefined, dryRun: false }, 'tenant remove', progress);
}

/** A tenant's open events and active series, counted: a scan of the table, as `quota reconcile` counts. */
function countOpen(location: Location, tenant: string): Promise<number> {
  return withTable(location, (client, tableName) => new DynamoDbEventListing(client, tableName).countOpen(tenant));
}

/**
 * Cancels every open event and recurring series of the tenant, by bulk cancel jobs, until a count
 * finds none or SETTLE_MS has passed: those a job found within the change cutoff are emitted
 * meanwhile, and those ingest took since a job read are cancelled by the next. The jobs' counts
 * added up, and what was still open at the end (0 when all ended).
 */
async function cancelOpen(
  location: Location,
  tenant: string,
  progress: (line: string) => void,
): Promise<{ readonly counts: BulkCancelCounts; readonly left: number }> {
  const deadline = Date.now() + SETTLE_MS;
  let counts = NO_COUNTS;
  for (;;) {
    const job = await cancelEveryOpenEvent(location, tenant, progress);
    counts = addCounts(counts, job.counts);
    const left = await countOpen(location, tenant);
    if (left === 0 || Date.now() >= deadline) return { counts, left };
    progress(`${count(left)} still open (due within the change cutoff, or taken since the job read): again in a second`);
    await sleep(RECOUNT_MS);
  }
}

/**
 * Forgets what the tenant kept besides its events (its counters and pauses, its refusals) and
 * records its removal, so that its id names no one else while anything of it may be left.
 */
async function forgetTenant(location: Location, tenant: string): Promise<TenantRemoval> {
  const removal = tenantRemoval(tenant, Date.now(), REMOVED_TENANT_LEFTOVERS);
  await withTable(location, async (client, tableName) => {
    await new DynamoDbTenantRemovals(client, tableName).record(removal);
    await new DynamoDbQuotaCounters(client, tableName).forget(tenant);
    await new DynamoDbRefusalLog(client, tableName).forget(tenant);
  });
  return removal;
}

/** What a removal did. */
export interface Removed {
  /** Its input topic, deleted. */
  readonly topicArn: string;
  /** What its bulk cancels did: the open events with --cancel-open, and those taken meanwhile. */
  readonly counts: BulkCancelCounts;
  /** Requests ingest took after the tenant was unregistered (each cancelled). */
  readonly takenLate: number;
  /** Events still open at the end, each to fail at its due time as UNKNOWN_TENANT (none but when the service reads the registry very late). */
  readonly stillOpen: number;
  readonly removal: TenantRemoval;
}

/**
 * Removes a tenant at a place (the running local service, or a deployed stack; see
 * docs/operators/tenants.md, "Removing a tenant"): refused with an AdminError, nothing changed,
 * while it has open events unless `cancelOpen`; its input topic deleted first, its open events
 * cancelled, its registry entry removed, what ingest took meanwhile cancelled, and its counters,
 * pauses and refusals forgotten. What tenant remove does, for an operator's own code too;
 * `progress` is told each step.
 */
export async function removeTenant(
  id: string,
  place: TenantPlace,
  options: { readonly cancelOpen: boolean },
  progress: (line: string) => void,
): Promise<Removed> {
  const { location } = place;
  if (id === PUBLIC_TENANT_ID)
    throw new AdminError(
      `"${PUBLIC_TENANT_ID}" is the shared input topic's tenant: turn it off in the tenants file's "public" section instead`,
    );
  if (!((await place.readRegistry()).tenants ?? []).some((tenant) => tenant.id === id))
    throw new AdminError(`tenant "${id}" is not registered in ${place.registryName} (scripts/admin tenant list shows who is)`);

  const open = await countOpen(location, id);
  if (open > 0 && !options.cancelOpen)
    throw new AdminError(
      `tenant "${id}" has ${count(open)} open events and active recurring series; nothing was changed. ` +
        'Cancel them first, or give --cancel-open to cancel them with the removal',
    );

  // Its requests stop at the topic first: what is published from now on is refused by SNS, to the client.
  const topicArn = await place.deleteTenantTopic(id);
  progress(`Input topic ${topicArn} deleted: the tenant's requests are no longer taken.`);

  let counts = NO_COUNTS;
  if (options.cancelOpen) {
    const cancelled = await cancelOpen(location, id, progress);
    counts = cancelled.counts;
    if (cancelled.left > 0)
      throw new AdminError(
        `${count(cancelled.left)} events of tenant "${id}" are still open after ${SETTLE_MS / 1000} s of bulk cancels: ` +
          'the tenant stays registered (its input topic is deleted). Run tenant remove again once they are emitted ' +
          '(without SCHEDULER_INDEX_QUEUED_EVENTS, events placed straight in the delay queue are found by no listing: they are emitted within the near-path window)',
      );
  }

  // Requests taken before the topic went may still be ingested until the service reads the registry without the tenant.
  const registry = await place.readRegistry();
  await place.writeRegistry(registry, { ...registry, tenants: (registry.tenants ?? []).filter((tenant) => tenant.id !== id) });
  await place.topicDeleted(id);
  const late = await cancelTakenLate(location, id, progress);
  counts = addCounts(counts, late.counts);
  return { topicArn, counts, takenLate: late.taken, stillOpen: late.stillOpen, removal: await forgetTenant(location, id) };
}

/**
 * Counts the unregistered tenant's open events a while after the last count, cancelling what
 * each finds, until one finds none (a service slow to read the file may take some still).
 */
async function cancelTakenLate(
  location: Location,
  tenant: string,
  progress: (line: string) => void,
): Promise<{ readonly counts: BulkCancelCounts; readonly taken: number; readonly stillOpen: number }> {
  let counts = NO_COUNTS;
  let taken = 0;
  for (let round = 0; ; round++) {
    await sleep(REGISTRY_IN_FORCE_MS);
    const open = await countOpen(location, tenant);
    if (open === 0 || round === LATE_ROUNDS) return { counts, taken, stillOpen: open };
    const job = await cancelEveryOpenEvent(location, tenant, progress);
    counts = addCounts(counts, job.counts);
    taken += open;
  }
}

export async function tenantRemove(args: string[], output: Output): Promise<number> {
  const command = 'tenant remove';
  const line = commandLine(
    command,
    args,
    {
      'cancel-open': { type: 'boolean', default: false },
      tenants: { type: 'string' },
      ...LOCATION_OPTIONS,
    },
    { usage: USAGE.tenantRemove, output },
  );
  if (line === undefined) return 0;
  const { values, positionals } = line;
  const id = onePositional(positionals, 'the tenant id', command);
  const cancelling = values['cancel-open'];
  const place = await tenantPlace(locationOf(values, command), values.tenants, command);
  let removed: Removed;
  try {
    removed = await removeTenant(id, place, { cancelOpen: cancelling }, (line) => output.err(line));
  } finally {
    place.close();
  }
  if (removed.takenLate > 0)
    output.err(`${count(removed.takenLate)} requests the tenant published before its topic was deleted were taken meanwhile: cancelled.`);
  if (removed.stillOpen > 0)
    output.err(
      `Warning: ${count(removed.stillOpen)} events of tenant ${id} are still open: each fails at its due time as UNKNOWN_TENANT, logged.`,
    );
  const cancelledText = cancelling || removed.takenLate > 0 ? ` Its open events: ${describeCounts(removed.counts, false)}.` : '';
  output.out(
    `Tenant ${id} removed from ${place.registryName}.${cancelledText} Its id is its own until ${new Date(removed.removal.reusableFrom).toISOString()}: ` +
      'tenant add --restore gives it back to the same client before then.',
  );
  return 0;
}

/**
 * Which of these ids may be registered now: an AdminError for the first whose removal still
 * stands, unless this is a restore; the removals to clear once they are registered again.
 */
export async function removalsToClear(location: Location, ids: readonly string[], restore: boolean): Promise<readonly string[]> {
  const removals = await withTable(location, (client, tableName) => new DynamoDbTenantRemovals(client, tableName).of(ids));
  const now = Date.now();
  for (const removal of removals.values()) {
    const refusal = registrationRefusal(removal, now, restore);
    if (refusal !== undefined) throw new AdminError(refusal);
  }
  return [...removals.keys()];
}

/** Forgets the removals of ids registered again. */
export async function clearRemovals(location: Location, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await withTable(location, async (client, tableName) => {
    const removals = new DynamoDbTenantRemovals(client, tableName);
    for (const id of ids) await removals.clear(id);
  });
}
