import { DynamoDbQuotaCounters, DynamoDbTenantRemovals, TenantRegistry } from '@adhoc-scheduler/shared';
import { describeError } from '@adhoc-scheduler/shared/describe-error';
import { commandLine, LOCATION_OPTIONS, onePositional } from './arguments.js';
import { AdminError } from './errors.js';
import { count, type Output } from './format.js';
import { locationOf, withTable, type Location } from './location.js';
import { pausesAt } from './pause-commands.js';
import { publicInputTopicArn } from './tenant-list.js';
import { readTenants } from './tenant-place.js';
import { inputTopicArnOf } from './topic-arns.js';
import { tenantDetailText, tenantJson } from './tenant-view.js';
import { USAGE } from './usage.js';

/** Its open-events count as its quota counter holds it, or why it could not be read. */
async function openEventsAt(location: Location, tenant: string): Promise<{ readonly open: number } | { readonly unknown: string }> {
  try {
    return { open: await withTable(location, (client, tableName) => new DynamoDbQuotaCounters(client, tableName).openEvents(tenant)) };
  } catch (error) {
    return { unknown: describeError(error) };
  }
}

/** Why a tenant the registry does not name is not there: removed (and whose its id still is), or never registered. */
async function notRegistered(location: Location, tenant: string, registryName: string): Promise<never> {
  let removed: string;
  try {
    const removal = await withTable(location, async (client, tableName) =>
      (await new DynamoDbTenantRemovals(client, tableName).of([tenant])).get(tenant),
    );
    removed =
      removal === undefined
        ? ''
        : `; it was removed at ${new Date(removal.removedAt).toISOString()}, and its id is its own until ${new Date(removal.reusableFrom).toISOString()}`;
  } catch (error) {
    // Said, not hidden: whether it was removed is not known.
    removed = `; whether it was removed is unknown (${describeError(error)})`;
  }
  throw new AdminError(`tenant "${tenant}" is not registered in ${registryName}${removed}`);
}

export async function tenantShow(args: string[], output: Output): Promise<number> {
  const command = 'tenant show';
  const line = commandLine(
    command,
    args,
    { json: { type: 'boolean', default: false }, tenants: { type: 'string' }, ...LOCATION_OPTIONS },
    { usage: USAGE.tenantShow, output },
  );
  if (line === undefined) return 0;
  const { values, positionals } = line;
  const id = onePositional(positionals, 'the tenant id', command);
  const location = locationOf(values, command);
  const { registry, registryName } = await readTenants(location, values.tenants, command);
  const tenant = new TenantRegistry(registry, '').tenant(id);
  if (tenant === undefined) return notRegistered(location, id, registryName);

  const [publicTopic, paused, open] = await Promise.all([
    publicInputTopicArn(location),
    pausesAt(location, [id]),
    openEventsAt(location, id),
  ]);
  for (const [what, read] of [
    ['Input topic ARN', publicTopic],
    ['Pause', paused],
    ['Open events', open],
  ] as const)
    if ('unknown' in read) output.err(`${what} unknown: ${read.unknown}`);
  const view = {
    tenant,
    inputTopicArn: 'arn' in publicTopic ? inputTopicArnOf(publicTopic.arn, id) : undefined,
    pause: 'pauses' in paused ? paused.pauses.get(id) : undefined,
  };
  const openEvents = 'open' in open ? open.open : undefined;
  if (values.json) output.out(JSON.stringify({ ...tenantJson(view), openEvents: openEvents ?? null }, null, 2));
  else output.out(tenantDetailText(view, openEvents === undefined ? '-' : count(openEvents)));
  return 0;
}
