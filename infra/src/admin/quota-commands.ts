import { DynamoDbEventListing, DynamoDbQuotaCounters, reconcileOpenEvents } from '@adhoc-scheduler/shared';
import { commandLine, LOCATION_OPTIONS, noPositionals } from './arguments.js';
import { AdminError, AdminUsageError } from './errors.js';
import { count, type Output } from './format.js';
import { locationOf, withTable } from './location.js';
import { unregisteredTenant } from './registry.js';
import { USAGE } from './usage.js';

/** `quota reconcile`: recounts a tenant's open events and corrects its quota counter. */
export async function quotaReconcile(args: string[], output: Output): Promise<number> {
  const command = 'quota reconcile';
  const line = commandLine(
    command,
    args,
    {
      tenant: { type: 'string' },
      json: { type: 'boolean', default: false },
      tenants: { type: 'string' },
      ...LOCATION_OPTIONS,
    },
    { usage: USAGE.quotaReconcile, output },
  );
  if (line === undefined) return 0;
  const { values, positionals } = line;
  noPositionals(positionals, command);
  const { tenant } = values;
  if (tenant === undefined) throw new AdminUsageError('--tenant is missing', command);
  const location = locationOf(values, command);
  // A tenant the registry does not know has no quota: a mistyped id is said, not counted.
  const unregistered = unregisteredTenant(tenant, location, values.tenants);
  if (unregistered !== '') throw new AdminError(`no quota to reconcile: ${unregistered}`);
  const result = await withTable(location, (client, tableName) =>
    reconcileOpenEvents(
      { counter: new DynamoDbQuotaCounters(client, tableName), census: new DynamoDbEventListing(client, tableName) },
      tenant,
    ),
  );
  if (values.json) {
    output.out(JSON.stringify(result, null, 2));
    return 0;
  }
  const { counted, counterBefore, counterAfter, correction, exact } = result;
  const said =
    counterBefore === counterAfter ? count(counterBefore) : `${count(counterBefore)} before the count and ${count(counterAfter)} after`;
  output.out(
    `tenant ${tenant}: ${count(counted)} open events counted; the counter said ${said}; ` +
      (correction === 0 ? 'nothing to correct.' : `corrected by ${correction > 0 ? '+' : ''}${count(correction)}.`) +
      (exact ? '' : ' Events started or ended during the count: run it again at a quieter moment for an exact count.'),
  );
  return 0;
}
