import { DynamoDbSeriesStore, eventIdFor, isSeriesId, PUBLIC_TENANT_ID, seriesId } from '@adhoc-scheduler/shared';
import { commandLine, LOCATION_OPTIONS, onePositional } from './arguments.js';
import { AdminError, AdminUsageError } from './errors.js';
import type { Output } from './format.js';
import { locationOf, withTable } from './location.js';
import { unregisteredTenant } from './registry.js';
import { seriesJson, seriesText } from './series-view.js';
import { USAGE } from './usage.js';

/** The series id to look up: an `s-` id as it is, or the tenant's client id as ingest derives the series' id from it. */
function seriesIdOf(given: string, tenant: string, user: string | undefined, command: string): string {
  if (isSeriesId(given)) return given;
  if (tenant === PUBLIC_TENANT_ID && user === undefined)
    throw new AdminUsageError(`the ${PUBLIC_TENANT_ID} tenant's client ids are per user: add --user (the request's "user")`, command);
  // Other tenants' ids do not depend on the user; ingest ignores it for them.
  return seriesId(eventIdFor(tenant, user ?? '', given, ''));
}

export async function seriesShow(args: string[], output: Output): Promise<number> {
  const command = 'series show';
  const line = commandLine(
    command,
    args,
    {
      tenant: { type: 'string' },
      user: { type: 'string' },
      json: { type: 'boolean', default: false },
      tenants: { type: 'string' },
      ...LOCATION_OPTIONS,
    },
    { usage: USAGE.seriesShow, output },
  );
  if (line === undefined) return 0;
  const { values, positionals } = line;
  const given = onePositional(positionals, 'the series id (s-...) or the client id of its request', command);
  const { tenant } = values;
  if (tenant === undefined) throw new AdminUsageError('--tenant is required: whose series it is', command);
  const id = seriesIdOf(given, tenant, values.user, command);
  const location = locationOf(values, command);
  const record = await withTable(location, async (client, tableName) =>
    (await new DynamoDbSeriesStore(client, tableName).read([id])).get(id),
  );
  // Another tenant's series is not found, as a client's cancel of it is not.
  if (record === undefined || record.tenant !== tenant) {
    const unregistered = unregisteredTenant(tenant, location, values.tenants);
    throw new AdminError(
      `no series ${id} of tenant ${tenant}: ${unregistered === '' ? 'unknown, or ended longer ago than the retention period' : unregistered}`,
    );
  }
  const now = Date.now();
  output.out(values.json ? JSON.stringify(seriesJson(record, now), null, 2) : seriesText(record, now));
  return 0;
}
