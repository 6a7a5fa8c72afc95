import {
  eventIdFor,
  isEventState,
  OPEN_STATES,
  parseDueDate,
  PUBLIC_TENANT_ID,
  EVENT_STATE,
  UNINDEXED_QUEUED_EVENTS_NOTE,
  SERIES_OCCURRENCES_NOTE,
  listingLeavesOutOccurrences,
} from '@adhoc-scheduler/shared';
import { commandLine, LOCATION_OPTIONS, noPositionals, onePositional } from './arguments.js';
import { AdminError, AdminUsageError } from './errors.js';
import { eventJson, eventsTable, eventText } from './event-view.js';
import type { Output } from './format.js';
import { locationOf, withEventListing } from './location.js';
import { knownTenants, refusalOfEvent } from './refusal-commands.js';
import { refusalJson, refusalText } from './refusal-view.js';
import { unregisteredTenant } from './registry.js';
import { pageLimit, PAGED_LISTING_OPTIONS, readPage, shardCountOption } from './listing-options.js';
import { USAGE } from './usage.js';

/** The event id to look up: given as is, or derived from a tenant's client id as ingest derives it. */
function eventIdOf(
  positionals: readonly string[],
  values: { readonly tenant?: string | undefined; readonly id?: string | undefined; readonly user?: string | undefined },
  command: string,
): { readonly eventId: string; readonly described: string } {
  const { tenant, id: clientId, user } = values;
  if (tenant === undefined && clientId === undefined) {
    const eventId = onePositional(positionals, 'the event id (or --tenant T --id CLIENT_ID)', command);
    return { eventId, described: `event ${eventId}` };
  }
  if (positionals.length > 0) throw new AdminUsageError('give an event id, or --tenant and --id, not both', command);
  if (tenant === undefined || clientId === undefined) throw new AdminUsageError('--tenant and --id go together', command);
  if (tenant === PUBLIC_TENANT_ID && user === undefined) {
    throw new AdminUsageError(`the ${PUBLIC_TENANT_ID} tenant's client ids are per user: add --user (the request's "user")`, command);
  }
  // Other tenants' ids do not depend on the user; ingest ignores it for them.
  const eventId = eventIdFor(tenant, user ?? '', clientId, '');
  const whose = tenant === PUBLIC_TENANT_ID ? `user ${user ?? ''} of the ${PUBLIC_TENANT_ID} tenant` : `tenant ${tenant}`;
  return { eventId, described: `event with client id "${clientId}" of ${whose} (${eventId})` };
}

export async function eventShow(args: string[], output: Output): Promise<number> {
  const command = 'event show';
  const line = commandLine(
    command,
    args,
    {
      tenant: { type: 'string' },
      id: { type: 'string' },
      user: { type: 'string' },
      json: { type: 'boolean', default: false },
      tenants: { type: 'string' },
      ...LOCATION_OPTIONS,
    },
    { usage: USAGE.eventShow, output },
  );
  if (line === undefined) return 0;
  const { values, positionals } = line;
  const { eventId, described } = eventIdOf(positionals, values, command);
  const location = locationOf(values, command);
  const record = await withEventListing(location, (records) => records.get(eventId));
  if (record === undefined) {
    const unregistered = values.tenant === undefined ? '' : unregisteredTenant(values.tenant, location, values.tenants);
    if (unregistered !== '') throw new AdminError(`no ${described}: ${unregistered}`);
    // A request refused at ingest made no event: its refusal says why.
    const tenants = values.tenant === undefined ? knownTenants(location, values.tenants) : [values.tenant];
    const refusal = await refusalOfEvent(location, tenants, eventId);
    if (refusal === undefined) throw new AdminError(`no ${described}: unknown, or ended longer ago than the retention period`);
    output.out(values.json ? JSON.stringify({ refused: refusalJson(refusal) }, null, 2) : refusalText(refusal));
    return 0;
  }
  output.out(values.json ? JSON.stringify(eventJson(record), null, 2) : eventText(record));
  return 0;
}

/** A date option as ISO 8601 (as requests give dates), in epoch ms. */
function dateOption(flag: string, text: string | undefined, command: string): number | undefined {
  if (text === undefined) return undefined;
  const epochMs = parseDueDate(text);
  if (epochMs === undefined) throw new AdminUsageError(`${flag} takes an ISO-8601 date-time, not "${text}"`, command);
  return epochMs;
}

export async function eventsList(args: string[], output: Output): Promise<number> {
  const command = 'events';
  const line = commandLine(
    command,
    args,
    { ...PAGED_LISTING_OPTIONS, state: { type: 'string', multiple: true }, from: { type: 'string' }, to: { type: 'string' } },
    { usage: USAGE.events, output },
  );
  if (line === undefined) return 0;
  const { values, positionals } = line;
  noPositionals(positionals, command);
  const { tenant, label, after } = values;
  if (tenant === undefined) throw new AdminUsageError('--tenant is missing', command);
  const states = values.state ?? [...OPEN_STATES];
  const unknown = states.find((state) => !isEventState(state));
  if (unknown !== undefined)
    throw new AdminUsageError(`--state takes one of ${Object.values(EVENT_STATE).join(', ')}, not "${unknown}"`, command);
  const query = {
    label,
    states: states.filter(isEventState),
    from: dateOption('--from', values.from, command),
    to: dateOption('--to', values.to, command),
    limit: pageLimit(values.limit, command),
    after,
  };
  const shardCount = shardCountOption(values['shard-count'], command);
  const location = locationOf(values, command);
  const { page, scope } = await readPage(after, command, () =>
    withEventListing(location, async (records, scope) => ({ page: await records.listEvents(tenant, query), scope }), shardCount),
  );
  const what = `${states.join(' or ')} events${label === undefined ? '' : ` labelled ${label}`}`;
  // An empty listing of a tenant the registry does not know is a mistake to say, not an answer.
  if (page.events.length === 0 && after === undefined) {
    const unregistered = unregisteredTenant(tenant, location, values.tenants);
    if (unregistered !== '') throw new AdminError(`no ${what}: ${unregistered}`);
  }
  if (values.json) {
    output.out(JSON.stringify({ events: page.events.map(eventJson), next: page.next ?? null }, null, 2));
    return 0;
  }
  output.out(
    page.events.length === 0 ? `no ${what} of tenant ${tenant}${after === undefined ? '' : ' after this token'}` : eventsTable(page.events),
  );
  if (page.next !== undefined) output.out(`next page: --after ${page.next}`);
  // Said on stderr, where it does not mix with the listing a script reads.
  if (label === undefined && !scope.listsQueuedEvents) output.err(UNINDEXED_QUEUED_EVENTS_NOTE);
  if (label === undefined && listingLeavesOutOccurrences(query.states)) output.err(SERIES_OCCURRENCES_NOTE);
  return 0;
}
