import { randomUUID } from 'node:crypto';
import { userInfo } from 'node:os';
import {
  DynamoDbTenantPauses,
  resumeJobId,
  resumeTenant,
  SqsChangesQueue,
  type Pause,
  type PauseAuthor,
  type ResumeOutcome,
} from '@adhoc-scheduler/shared';
import { describeError } from '@adhoc-scheduler/shared/describe-error';
import { commandLine, LOCATION_OPTIONS, onePositional } from './arguments.js';
import { AdminError } from './errors.js';
import type { Output } from './format.js';
import { locationOf, withChangesQueue, withTable, type Location } from './location.js';
import { unregisteredTenant } from './registry.js';
import { pauseText } from './tenant-view.js';
import { USAGE } from './usage.js';

/** Who pauses or resumes: the operator, by its login on this machine (its pause is one a tenant cannot lift). */
const operator = (): PauseAuthor => ({ owner: 'operator', name: `operator ${userInfo().username}` });

/** The id of the one tenant a pause or resume names: a registered tenant's, or the public one's. */
function tenantOf(positionals: string[], command: string, location: Location, tenantsFile: string | undefined): string {
  const tenant = onePositional(positionals, 'the tenant id', command);
  const unregistered = unregisteredTenant(tenant, location, tenantsFile);
  if (unregistered !== '') throw new AdminError(unregistered);
  return tenant;
}

/** Pauses a tenant at a location (its pause's first time kept if it already was), as its operator. */
export async function pauseTenant(location: Location, tenant: string, note: string | undefined): Promise<void> {
  await withTable(location, (client, tableName) =>
    new DynamoDbTenantPauses(client, tableName).pause(tenant, operator(), { pausedAt: Date.now(), note }),
  );
}

/** `tenant pause`: holds a tenant's events as they come due, until `tenant resume`. */
export async function tenantPause(args: string[], output: Output): Promise<number> {
  const command = 'tenant pause';
  const line = commandLine(
    command,
    args,
    { note: { type: 'string' }, tenants: { type: 'string' }, ...LOCATION_OPTIONS },
    { usage: USAGE.tenantPause, output },
  );
  if (line === undefined) return 0;
  const { values, positionals } = line;
  const location = locationOf(values, command);
  const tenant = tenantOf(positionals, command, location, values.tenants);
  await pauseTenant(location, tenant, values.note);
  output.err(
    `Tenant ${tenant} paused: its events are held as they come due (none is published) until scripts/admin tenant resume ${tenant}.`,
  );
  return 0;
}

/**
 * Ends the operator's pause of a tenant at a location, and, unless the tenant's own pause stands,
 * starts the job that sends the events held during it (any event still held is sent all the same).
 */
export async function resumeTenantAt(location: Location, tenant: string, command = 'tenant resume'): Promise<ResumeOutcome> {
  return withChangesQueue(location, command, (sqs, queueUrl) =>
    withTable(location, (client, tableName) =>
      resumeTenant(
        { pauses: new DynamoDbTenantPauses(client, tableName), changesQueue: new SqsChangesQueue(sqs, queueUrl) },
        tenant,
        operator(),
        resumeJobId(randomUUID()),
        Date.now(),
      ),
    ),
  );
}

/** What an operator's resume did, in a sentence. */
export function resumedText(tenant: string, { ended, stillPaused }: ResumeOutcome): string {
  if (stillPaused !== undefined)
    return `Tenant ${tenant} ${ended === undefined ? 'was not paused by its operator' : 'is no longer paused by its operator'}, but stays paused ${pauseText(stillPaused)}: its own resume sends its held events.`;
  return ended === undefined
    ? `Tenant ${tenant} was not paused; any event of it still held is sent now.`
    : `Tenant ${tenant} resumed (paused ${pauseText(ended)}); its held events are sent now, oldest first, each late by its pause.`;
}

/** `tenant resume`: ends a tenant's pause, and sends the events held during it, oldest first. */
export async function tenantResume(args: string[], output: Output): Promise<number> {
  const command = 'tenant resume';
  const line = commandLine(command, args, { tenants: { type: 'string' }, ...LOCATION_OPTIONS }, { usage: USAGE.tenantResume, output });
  if (line === undefined) return 0;
  const { values, positionals } = line;
  const location = locationOf(values, command);
  const tenant = tenantOf(positionals, command, location, values.tenants);
  output.err(resumedText(tenant, await resumeTenantAt(location, tenant)));
  return 0;
}

/** The pauses of these tenants at a location, for `tenant list`; why they are unknown when the table cannot be read. */
export async function pausesAt(
  location: Location,
  tenants: readonly string[],
): Promise<{ readonly pauses: ReadonlyMap<string, Pause> } | { readonly unknown: string }> {
  try {
    return { pauses: await withTable(location, (client, tableName) => new DynamoDbTenantPauses(client, tableName).paused(tenants)) };
  } catch (error) {
    return { unknown: describeError(error) };
  }
}
