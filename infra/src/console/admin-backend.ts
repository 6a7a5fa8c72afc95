import { PublishCommand } from '@aws-sdk/client-sns';
import {
  changeRefusal,
  DynamoDbQuotaCounters,
  EVENT_STATE,
  OPEN_STATES,
  PageTokenError,
  PUBLIC_TENANT_ID,
  TenantRegistry,
  type EventRecord,
  type EventRecords,
} from '@adhoc-scheduler/shared';
import { LOCAL_SERVICE_FILES } from '@adhoc-scheduler/shared/local-service';
import { AdminError } from '../admin/errors.js';
import { withEventRecords, withInputTopic, withTable, type Location } from '../admin/location.js';
import { readRegistry } from '../admin/tenant-commands.js';
import {
  ConsoleRequestError,
  NotAvailableError,
  type ActionOutcome,
  type ConsoleBackend,
  type DeadLetter,
  type EventFilter,
  type EventLifecycle,
  type EventPage,
  type Overview,
  type TenantSummary,
} from './backend.js';
import { HOUR_MS, lifecycleSteps, overviewFigures } from './figures.js';

/** Events the overview reads for its figures at most, per window; past it, the figures are lower bounds. */
const OVERVIEW_READ_LIMIT = 5000;
/** Records one read of the operators' listing returns (its most). */
const LIST_PAGE = 100;
/** How long an action waits for ingest to apply the request it published, polling the record. */
const APPLY_WAIT_MS = 15_000;
const APPLY_POLL_MS = 100;

export interface AdminBackendOptions {
  /** The tenant registry: the local service's file by default; a deployed stack's only when named. */
  readonly tenantsFile?: string | undefined;
}

/**
 * The console over what the admin CLI reaches today, at either location (infra/src/admin/location.ts):
 * events through the operators' listing (a filtered scan per state: labels are filtered from the
 * records, as the table has no label index yet), tenants from the registry and their quota
 * counters, and cancel and reschedule published to the tenant's input topic as its client would,
 * so that ingest applies them with all its checks. Pause, bulk cancel and dead letters are not
 * in this scheduler: those methods throw NotAvailableError.
 */
export class AdminConsoleBackend implements ConsoleBackend {
  readonly description: string;
  private readonly tenantsFile: string | undefined;

  constructor(
    private readonly location: Location,
    options: AdminBackendOptions = {},
  ) {
    this.tenantsFile = options.tenantsFile ?? (location.kind === 'local' ? LOCAL_SERVICE_FILES.tenants : undefined);
    this.description =
      location.kind === 'local'
        ? `local service (${location.outputs})`
        : `deployed stack (${location.stackOutputs ?? `table ${location.table ?? ''}`}${location.profile ? `, profile ${location.profile}` : ''})`;
  }

  private registry(): TenantRegistry {
    // Without a file (a deployed stack named without one), only the public tenant is known.
    return new TenantRegistry(this.tenantsFile === undefined ? {} : readRegistry(this.tenantsFile), '');
  }

  async tenants(): Promise<readonly TenantSummary[]> {
    const tenants = this.registry().all();
    const counts = await withTable(this.location, (client, tableName) => {
      const counters = new DynamoDbQuotaCounters(client, tableName);
      return Promise.all(tenants.map((tenant) => counters.openEvents(tenant.id)));
    });
    return tenants.map((tenant, index) => ({
      id: tenant.id,
      enabled: tenant.enabled,
      maxOpenEvents: tenant.quotas.maxOpenEvents,
      maxIngestPerSecond: tenant.quotas.maxIngestPerSecond,
      openEvents: counts[index],
      pause: { paused: 'unknown' },
    }));
  }

  async overview(tenantId: string, now: number): Promise<Overview> {
    const tenant = (await this.tenants()).find((known) => known.id === tenantId);
    if (tenant === undefined) throw new ConsoleRequestError(`tenant "${tenantId}" is not registered`);
    return withEventRecords(this.location, async (records) => {
      const next = await this.matching(records, tenantId, { states: OPEN_STATES, from: now, to: now + HOUR_MS }, OVERVIEW_READ_LIMIT);
      const last = await this.matching(
        records,
        tenantId,
        { states: [EVENT_STATE.emitted, EVENT_STATE.failed], from: now - HOUR_MS, to: now },
        OVERVIEW_READ_LIMIT,
      );
      return {
        tenant,
        ...overviewFigures(now, next.events, last.events),
        complete: next.complete && last.complete,
      };
    });
  }

  async listEvents(tenant: string, filter: EventFilter): Promise<EventPage> {
    try {
      return await withEventRecords(this.location, (records) => records.listEvents(tenant, filter));
    } catch (error) {
      if (error instanceof PageTokenError) throw new ConsoleRequestError(error.message);
      throw error;
    }
  }

  /** A tenant's events matching the filter, in due order, through the listing, up to `limit` of them. */
  private async matching(
    records: EventRecords,
    tenant: string,
    filter: Omit<EventFilter, 'limit' | 'after'>,
    limit: number,
  ): Promise<{ readonly events: EventRecord[]; readonly complete: boolean }> {
    const events: EventRecord[] = [];
    let after: string | undefined;
    do {
      const page = await records.listEvents(tenant, { ...filter, limit: LIST_PAGE, after });
      events.push(...page.events);
      if (events.length >= limit) return { events: events.slice(0, limit), complete: false };
      after = page.next;
    } while (after !== undefined);
    return { events, complete: true };
  }

  async eventLifecycle(id: string): Promise<EventLifecycle | undefined> {
    const event = await withEventRecords(this.location, (records) => records.get(id));
    return event === undefined ? undefined : { event, steps: lifecycleSteps(event) };
  }

  async deadLetters(): Promise<readonly DeadLetter[]> {
    throw new NotAvailableError('Listing dead letters');
  }

  cancel(id: string): Promise<ActionOutcome> {
    return this.change(id, 'cancel', {}, (event, messageId) => event.cancelledBy === messageId, 'cancelled');
  }

  reschedule(id: string, dueAt: number): Promise<ActionOutcome> {
    return this.change(
      id,
      'reschedule',
      { date: new Date(dueAt).toISOString() },
      (event, messageId) => event.lastChangeBy === messageId,
      `rescheduled to ${new Date(dueAt).toISOString()}`,
    );
  }

  /**
   * Publishes a cancel or reschedule of the event to its tenant's input topic, as its client
   * would, then waits for the record to show it applied. Refused at once when the record says
   * ingest would refuse it (with the same reason code).
   */
  private async change(
    id: string,
    action: 'cancel' | 'reschedule',
    fields: Readonly<Record<string, string>>,
    applied: (event: EventRecord, messageId: string) => boolean,
    done: string,
  ): Promise<ActionOutcome> {
    const event = await withEventRecords(this.location, (records) => records.get(id));
    const refusal = (current: EventRecord | undefined) =>
      changeRefusal(current, { tenant: current?.tenant ?? '', action, now: Date.now(), cutoffMs: 0 });
    const before = refusal(event);
    if (event === undefined || before !== undefined)
      return {
        applied: false,
        message: `Event ${id} was not ${action === 'cancel' ? 'cancelled' : 'rescheduled'}: ${before?.reason ?? ''}.`,
      };
    // The shared topic admits changes only of events named by their m- id (see docs/clients.md).
    if (event.tenant === PUBLIC_TENANT_ID && !id.startsWith('m-'))
      return {
        applied: false,
        message: `Event ${id} was not changed: CONTROL_NOT_ALLOWED (a public tenant's event scheduled with an id cannot be changed).`,
      };
    const messageId = await withInputTopic(this.location, event.tenant, async (sns, topicArn) => {
      const { MessageId } = await sns.send(
        new PublishCommand({ TopicArn: topicArn, Message: JSON.stringify({ action, event_id: id, ...fields }) }),
      );
      if (MessageId === undefined) throw new AdminError(`${topicArn} returned no MessageId`);
      return MessageId;
    });
    const deadline = Date.now() + APPLY_WAIT_MS;
    for (;;) {
      const current = await withEventRecords(this.location, (records) => records.get(id));
      if (current !== undefined && applied(current, messageId)) return { applied: true, message: `Event ${id} ${done}.` };
      const now = refusal(current);
      if (now !== undefined)
        return { applied: false, message: `Event ${id} was not ${action === 'cancel' ? 'cancelled' : 'rescheduled'}: ${now.reason}.` };
      if (Date.now() > deadline)
        return {
          applied: false,
          message: `The ${action} of event ${id} was sent (message ${messageId}) but not applied within ${APPLY_WAIT_MS / 1000} s: the event's page shows its state; a refusal goes to the tenant's dead-letter topic.`,
        };
      await new Promise((resolve) => setTimeout(resolve, APPLY_POLL_MS));
    }
  }

  async cancelByLabel(): Promise<ActionOutcome> {
    throw new NotAvailableError('Cancelling by label');
  }

  async redrive(): Promise<ActionOutcome> {
    throw new NotAvailableError('Redriving dead letters');
  }

  async purge(): Promise<ActionOutcome> {
    throw new NotAvailableError('Purging dead letters');
  }

  async pause(): Promise<ActionOutcome> {
    throw new NotAvailableError('Pausing a tenant');
  }

  async resume(): Promise<ActionOutcome> {
    throw new NotAvailableError('Resuming a tenant');
  }
}
