import { PublishCommand } from '@aws-sdk/client-sns';
import {
  addEndCounts,
  changeRefusal,
  describeCounts,
  DynamoDbEndCounters,
  isLabel,
  isMessageEventId,
  lastHourMinutes,
  NO_ENDS,
  lifecycleSteps,
  OPEN_STATES,
  PageTokenError,
  PUBLIC_TENANT_ID,
  type EventRecord,
  type EventListing,
  type RecentRefusals,
  type SeriesPage,
  type SeriesQuery,
  type Tenant,
} from '@adhoc-scheduler/shared';
import { LOCAL_SERVICE_FILES } from '@adhoc-scheduler/shared/local-service-access';
import { cancelOpenEvents } from '../admin/bulk-cancel-command.js';
import {
  listDeadLetters,
  purgeDeadLetters,
  queueChoice,
  redriveDeadLetters,
  type DeadLetterChoice,
} from '../admin/dead-letter-commands.js';
import { lastErrorText, queueName } from '../admin/dead-letter-view.js';
import type { DeadLetter as QueuedDeadLetter } from '../admin/dead-letters.js';
import { AdminError } from '../admin/errors.js';
import { withEventListing, withInputTopic, withSeriesListing, withTable, type Location } from '../admin/location.js';
import { seriesAt } from '../admin/series-commands.js';
import { pauseTenant, resumedText, resumeTenantAt } from '../admin/pause-commands.js';
import { withRefusalLog } from '../admin/refusal-commands.js';
import { pageOfTenants, pageOfTenantsAt, tenantAt, unregisteredTenant, type TenantFilter } from '../admin/registry.js';
import {
  ConsoleRequestError,
  type ActionOutcome,
  type ConsoleBackend,
  type DeadLetter,
  type DeadLetterFilter,
  type EventFilter,
  type EventLifecycle,
  type EventPage,
  type Overview,
  type SeriesDetail,
  type TenantsPage,
  type TenantSummary,
} from './backend.js';
import { HOUR_MS, overviewFigures } from './figures.js';
import { RegistryFile } from './registry-file.js';
import { summariesOf, tenantStatesAt, type TenantStates } from './tenant-states.js';

/** Open events the overview's timeline reads at most; past it, its counts are lower bounds. */
const OVERVIEW_READ_LIMIT = 5000;
/** Records one read of the operators' listing returns (its most). */
const LIST_PAGE = 100;
/** How long an action waits for ingest to apply the request it published, polling the record. */
const APPLY_WAIT_MS = 15_000;
const APPLY_POLL_MS = 100;
/** Dead letters the view lists at most, as `dead-letters list --limit` would. */
const DEAD_LETTERS_SHOWN = 100;

export interface AdminBackendOptions {
  /** The tenant registry: the local service's file by default; on a deployed stack its table, unless a file is named. */
  readonly tenantsFile?: string | undefined;
  /** Where the tenants' counters and pauses are read: the location's table unless given (a test counts the reads). */
  readonly tenantStates?: TenantStates | undefined;
}

/**
 * The console over what the admin CLI reaches, at either location (infra/src/admin/location.ts):
 * events through the operators' listing, tenants from the registry with their quota counters and
 * pauses, and cancel and reschedule published to the tenant's input topic as its client would, so
 * that ingest applies them with all its checks. Cancel by label, pause, resume and the dead
 * letters run the admin commands' own functions, so the console and `scripts/admin` act alike.
 */
export class AdminConsoleBackend implements ConsoleBackend {
  readonly description: string;
  private readonly registryFile: RegistryFile;
  private readonly tenantStates: TenantStates;

  constructor(
    private readonly location: Location,
    options: AdminBackendOptions = {},
  ) {
    this.registryFile = new RegistryFile(options.tenantsFile ?? (location.kind === 'local' ? LOCAL_SERVICE_FILES.tenants : undefined));
    this.tenantStates = options.tenantStates ?? tenantStatesAt(location);
    this.description =
      location.kind === 'local'
        ? `local service (${location.outputs})`
        : `deployed stack (${location.stackOutputs ?? `table ${location.table ?? ''}`}${location.profile ? `, profile ${location.profile}` : ''})`;
  }

  /**
   * Reads the tenants file now, so that the first view does not (a registry of 100,000 tenants
   * takes about a second to check and build); an AdminError when it is invalid.
   */
  readRegistry(): void {
    this.registryFile.current();
  }

  async tenants(filter: TenantFilter): Promise<TenantsPage> {
    const { tenants, next } = await this.pageOfTenants(filter);
    return { tenants: await summariesOf(tenants, this.tenantStates), next };
  }

  async tenant(id: string): Promise<TenantSummary | undefined> {
    const tenant = this.registryFile.path === undefined ? await tenantAt(this.location, id) : this.registryFile.current().tenant(id);
    return tenant === undefined ? undefined : (await summariesOf([tenant], this.tenantStates))[0];
  }

  async defaultTenant(): Promise<string> {
    const { tenants } = await this.pageOfTenants({ limit: 2 });
    return (tenants.find((tenant) => tenant.id !== PUBLIC_TENANT_ID) ?? tenants[0])?.id ?? PUBLIC_TENANT_ID;
  }

  /** A page of the tenants file the console holds, or, without one (a deployed stack), of the table's registry. */
  private pageOfTenants(filter: TenantFilter): Promise<{ readonly tenants: readonly Tenant[]; readonly next: string | undefined }> {
    return this.registryFile.path === undefined
      ? pageOfTenantsAt(this.location, filter)
      : Promise.resolve(pageOfTenants(this.registryFile.current(), filter));
  }

  async overview(tenantId: string, now: number): Promise<Overview> {
    const tenant = await this.tenant(tenantId);
    if (tenant === undefined) throw new ConsoleRequestError(`tenant "${tenantId}" is not registered`);
    const [{ next, listsQueuedEvents }, minutes] = await Promise.all([
      withEventListing(this.location, async (records, scope) => ({
        next: await this.matching(records, tenantId, { states: OPEN_STATES, from: now, to: now + HOUR_MS }, OVERVIEW_READ_LIMIT),
        listsQueuedEvents: scope.listsQueuedEvents,
      })),
      // The ends are counted, not listed: right whatever the listing's setting.
      withTable(this.location, (client, tableName) => new DynamoDbEndCounters(client, tableName).read(tenantId, lastHourMinutes(now))),
    ]);
    return {
      tenant,
      ...overviewFigures(now, next.events, minutes.reduce(addEndCounts, NO_ENDS)),
      complete: next.complete,
      listsQueuedEvents,
    };
  }

  refusals(tenant: string): Promise<RecentRefusals> {
    return withRefusalLog(this.location, (log) => log.recent(tenant));
  }

  async listEvents(tenant: string, filter: EventFilter): Promise<EventPage> {
    try {
      return await withEventListing(this.location, async (records, scope) => ({
        ...(await records.listEvents(tenant, filter)),
        listsQueuedEvents: scope.listsQueuedEvents,
      }));
    } catch (error) {
      if (error instanceof PageTokenError) throw new ConsoleRequestError(error.message);
      throw error;
    }
  }

  async listSeries(tenant: string, filter: SeriesQuery): Promise<SeriesPage> {
    try {
      return await withSeriesListing(this.location, (listing) => listing.listSeries(tenant, filter));
    } catch (error) {
      if (error instanceof PageTokenError) throw new ConsoleRequestError(error.message);
      throw error;
    }
  }

  seriesDetail(id: string, now: number): Promise<SeriesDetail | undefined> {
    return seriesAt(this.location, id, now);
  }

  /** A tenant's events matching the filter, in due order, through the listing, up to `limit` of them. */
  private async matching(
    records: EventListing,
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
    const event = await withEventListing(this.location, (records) => records.get(id));
    return event === undefined ? undefined : { event, steps: lifecycleSteps(event) };
  }

  async deadLetters(filter: DeadLetterFilter): Promise<readonly DeadLetter[]> {
    const letters = await listDeadLetters(this.location, deadLetterChoice(filter, DEAD_LETTERS_SHOWN));
    return letters.map(asShown);
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
    const event = await withEventListing(this.location, (records) => records.get(id));
    const refusal = (current: EventRecord | undefined) =>
      changeRefusal(current, { tenant: current?.tenant ?? '', action, now: Date.now(), cutoffMs: 0 });
    const before = refusal(event);
    if (event === undefined || before !== undefined)
      return {
        applied: false,
        message: `Event ${id} was not ${action === 'cancel' ? 'cancelled' : 'rescheduled'}: ${before?.reason ?? ''} (${before?.explanation ?? ''}).`,
      };
    // The shared topic admits changes only of events named by their m- id (see docs/clients.md).
    if (event.tenant === PUBLIC_TENANT_ID && !isMessageEventId(id))
      return {
        applied: false,
        message: `Event ${id} was not changed: CONTROL_NOT_ALLOWED (a public tenant's event scheduled with an id cannot be changed).`,
      };
    const messageId = await withInputTopic(this.location, event.tenant, async (sns, topicArn) => {
      const { MessageId } = await sns.send(
        // Its tenant as the group, as a client names its own (docs/clients.md): the ingest queue takes tenants in turns.
        new PublishCommand({
          TopicArn: topicArn,
          Message: JSON.stringify({ action, event_id: id, ...fields }),
          MessageGroupId: event.tenant,
        }),
      );
      if (MessageId === undefined) throw new AdminError(`${topicArn} returned no MessageId`);
      return MessageId;
    });
    const deadline = Date.now() + APPLY_WAIT_MS;
    for (;;) {
      const current = await withEventListing(this.location, (records) => records.get(id));
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

  /** The registered tenant named; a ConsoleRequestError for one the registry does not name. */
  private registered(tenant: string): string {
    // The registry the console holds (read again only if the file changed); unregisteredTenant reads it whole to say why not.
    if (this.registryFile.current().tenant(tenant) !== undefined) return tenant;
    const unregistered = unregisteredTenant(tenant, this.location, this.registryFile.path);
    if (unregistered !== '') throw new ConsoleRequestError(unregistered);
    return tenant;
  }

  async cancelByLabel(tenant: string, label: string, dueBefore: number | undefined): Promise<ActionOutcome> {
    if (!isLabel(label))
      throw new ConsoleRequestError(`a label is 1 to 64 of A-Z a-z 0-9 . _ : -, starting with a letter or digit, not "${label}"`);
    const job = await cancelOpenEvents(
      this.location,
      { tenant: this.registered(tenant), label, dueBefore, dryRun: false, tenantsFile: this.registryFile.path },
      'cancel by label',
      () => {},
    );
    const bound = dueBefore === undefined ? '' : ` due before ${new Date(dueBefore).toISOString()}`;
    return {
      applied: true,
      message: `The open events of ${tenant} labelled ${label}${bound}: ${describeCounts(job.counts, false)} (job ${job.jobId}).`,
    };
  }

  async redrive(filter: DeadLetterFilter): Promise<ActionOutcome> {
    const { redriven, skipped } = await redriveDeadLetters(this.location, deadLetterChoice(filter, Number.POSITIVE_INFINITY), false);
    const sent = redriven.map((letter) => `${letter.messageId} to the ${queueName(letter)} queue`);
    const notSent = skipped.map(({ letter, why }) => `${letter.messageId}: ${why}`);
    return {
      applied: redriven.length > 0 && skipped.length === 0,
      message:
        `${messages(redriven.length)} redriven${sent.length === 0 ? '' : ` (${sent.join('; ')})`}.` +
        (notSent.length === 0 ? '' : ` Not redriven: ${notSent.join('; ')}.`),
    };
  }

  async purge(filter: DeadLetterFilter): Promise<ActionOutcome> {
    const purged = await purgeDeadLetters(this.location, deadLetterChoice(filter, Number.POSITIVE_INFINITY));
    return {
      applied: purged.length > 0,
      message: `${messages(purged.length)} purged${purged.length === 0 ? '' : ` (${purged.map((letter) => letter.messageId).join(', ')})`}.`,
    };
  }

  async pause(tenant: string, note: string): Promise<ActionOutcome> {
    await pauseTenant(this.location, this.registered(tenant), note === '' ? undefined : note);
    return {
      applied: true,
      message: `Tenant ${tenant} paused: its events are held as they come due (none is published) until it is resumed.`,
    };
  }

  async resume(tenant: string): Promise<ActionOutcome> {
    return { applied: true, message: resumedText(tenant, await resumeTenantAt(this.location, this.registered(tenant))) };
  }
}

function messages(count: number): string {
  return `${count} message${count === 1 ? '' : 's'}`;
}

/** The console's filter as the dead-letter commands choose: every queue unless one is named. */
function deadLetterChoice(filter: DeadLetterFilter, limit: number): DeadLetterChoice {
  const queue = filter.queue ?? 'all';
  const queues = queueChoice(queue);
  if (queues === undefined) throw new ConsoleRequestError(`there is no ${queue} queue`);
  return { ...queues, tenant: filter.tenant, event: filter.eventId, label: filter.label, messageId: filter.messageId, limit };
}

/** A dead letter as the view shows it. */
function asShown(letter: QueuedDeadLetter): DeadLetter {
  return {
    messageId: letter.messageId,
    queue: queueName(letter),
    receiveCount: letter.receiveCount,
    firstSentAt: letter.sentAt,
    tenant: letter.tenant,
    eventId: letter.eventIds.length === 0 ? undefined : letter.eventIds.join(' '),
    labels: letter.labels,
    lastError: letter.lastError === undefined ? undefined : lastErrorText(letter),
  };
}
