import {
  eventIdFor,
  isSeriesId,
  lastOccurrences,
  PUBLIC_TENANT_ID,
  seriesId,
  type PastOccurrence,
  type SeriesRecord,
} from '@adhoc-scheduler/shared';
import { commandLine, LOCATION_OPTIONS, noPositionals, onePositional } from './arguments.js';
import { AdminError, AdminUsageError } from './errors.js';
import type { Output } from './format.js';
import { locationOf, withSeriesListing, type Location } from './location.js';
import { unregisteredTenant } from './registry.js';
import { PAST_SHOWN, seriesJson, seriesSummaryJson, seriesTable, seriesText } from './series-view.js';
import { pageLimit, PAGED_LISTING_OPTIONS, readPage, shardCountOption } from './listing-options.js';
import { USAGE } from './usage.js';

/** The series id to look up: an `s-` id as it is, or the tenant's client id as ingest derives the series' id from it. */
function seriesIdOf(given: string, tenant: string, user: string | undefined, command: string): string {
  if (isSeriesId(given)) return given;
  if (tenant === PUBLIC_TENANT_ID && user === undefined)
    throw new AdminUsageError(`the ${PUBLIC_TENANT_ID} tenant's client ids are per user: add --user (the request's "user")`, command);
  // Other tenants' ids do not depend on the user; ingest ignores it for them.
  return seriesId(eventIdFor(tenant, user ?? '', given, ''));
}

/**
 * A series at `now` with its last occurrences and the events they became; undefined when there is
 * none of that id, or, `tenant` given, when it is another tenant's (as a client's cancel of it is not found).
 */
export function seriesAt(
  location: Location,
  id: string,
  now: number,
  tenant?: string,
): Promise<{ readonly record: SeriesRecord; readonly past: readonly PastOccurrence[] } | undefined> {
  return withSeriesListing(location, async (listing, records) => {
    const record = (await records.read([id])).get(id);
    if (record === undefined || (tenant !== undefined && record.tenant !== tenant)) return undefined;
    return { record, past: await lastOccurrences(listing, record, now, PAST_SHOWN) };
  });
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
  const now = Date.now();
  const found = await seriesAt(location, id, now, tenant);
  if (found === undefined) {
    const unregistered = unregisteredTenant(tenant, location, values.tenants);
    throw new AdminError(
      `no series ${id} of tenant ${tenant}: ${unregistered === '' ? 'unknown, or ended longer ago than the retention period' : unregistered}`,
    );
  }
  const { record, past } = found;
  output.out(values.json ? JSON.stringify(seriesJson(record, now, past), null, 2) : seriesText(record, now, past));
  return 0;
}

export async function seriesList(args: string[], output: Output): Promise<number> {
  const command = 'series list';
  const line = commandLine(command, args, PAGED_LISTING_OPTIONS, { usage: USAGE.seriesList, output });
  if (line === undefined) return 0;
  const { values, positionals } = line;
  noPositionals(positionals, command);
  const { tenant, label, after } = values;
  if (tenant === undefined) throw new AdminUsageError('--tenant is missing', command);
  const limit = pageLimit(values.limit, command);
  const shardCount = shardCountOption(values['shard-count'], command);
  const location = locationOf(values, command);
  const page = await readPage(after, command, () =>
    withSeriesListing(location, (listing) => listing.listSeries(tenant, { label, limit, after }), shardCount),
  );
  const what = `series${label === undefined ? '' : ` labelled ${label}`}`;
  if (page.series.length === 0 && after === undefined) {
    const unregistered = unregisteredTenant(tenant, location, values.tenants);
    if (unregistered !== '') throw new AdminError(`no ${what}: ${unregistered}`);
  }
  const now = Date.now();
  if (values.json) {
    output.out(JSON.stringify({ series: page.series.map((record) => seriesSummaryJson(record, now)), next: page.next ?? null }, null, 2));
    return 0;
  }
  output.out(
    page.series.length === 0
      ? `no active ${what} of tenant ${tenant}${after === undefined ? '' : ' after this token'}`
      : seriesTable(page.series, now),
  );
  if (page.next !== undefined) output.out(`next page: --after ${page.next}`);
  return 0;
}
