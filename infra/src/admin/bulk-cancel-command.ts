import { randomUUID } from 'node:crypto';
import {
  bulkCancelJobId,
  createLogger,
  DEFAULTS,
  describeCounts,
  DynamoDbBulkCancelJobs,
  expiresAtFor,
  isLabel,
  parseDueDate,
  SqsChangesQueue,
  startBulkCancel,
  toIso,
  type BulkCancelJob,
  type ChangesQueue,
} from '@adhoc-scheduler/shared';
import { describeError } from '@adhoc-scheduler/shared/describe-error';
import { commandLine, LOCATION_OPTIONS, noPositionals } from './arguments.js';
import { AdminError, AdminUsageError } from './errors.js';
import type { Output } from './format.js';
import { locationOf, withChangesQueue, withTable, type Location } from './location.js';
import { unregisteredTenant } from './registry.js';
import { USAGE } from './usage.js';

/** How often the job's item is read while waiting for it. */
const POLL_MS = 250;
/** How long a job may stand still before the command stops waiting (the job itself goes on). */
const STALL_MS = 120_000;

export function progressLine(job: BulkCancelJob): string {
  return `${job.state === 'done' ? 'done' : 'working'}: ${describeCounts(job.counts, job.dryRun)}`;
}

/**
 * Waits for a job, printing its counts as they move, until it is done; an AdminError when it
 * stands still for STALL_MS (nothing works its pages: the service is stopped, or a page keeps failing).
 */
async function waitForJob(jobs: DynamoDbBulkCancelJobs, jobId: string, progress: (line: string) => void): Promise<BulkCancelJob> {
  let shown = '';
  let movedAt = Date.now();
  for (;;) {
    const job = await jobs.get(jobId);
    if (job === undefined) throw new AdminError(`job ${jobId} is gone`);
    const line = progressLine(job);
    if (line !== shown) {
      if (job.state === 'done') return job;
      progress(line);
      shown = line;
      movedAt = Date.now();
    } else if (Date.now() - movedAt > STALL_MS) {
      throw new AdminError(
        `job ${jobId} has not moved for ${STALL_MS / 1000} s (${line}): is the scheduler's changes function running? ` +
          'The job goes on when it runs.',
      );
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** The changes queue, its refusals said as what the operator sees. */
function reportingRefusals(queue: ChangesQueue, queueUrl: string): Pick<ChangesQueue, 'sendPage'> {
  return {
    sendPage: (jobId, from) =>
      queue.sendPage(jobId, from).catch((error: unknown) => {
        throw new AdminError(`cannot send the job's first page to ${queueUrl}: ${describeError(error)}`);
      }),
  };
}

/** What a bulk cancel chooses: a tenant's open events with a label, or all of them (`label` undefined). */
export interface BulkCancelRequest {
  readonly tenant: string;
  readonly label: string | undefined;
  readonly dueBefore: number | undefined;
  readonly dryRun: boolean;
}

/** What an operator's bulk cancel chooses, as `events cancel` takes it: by label, or every open event (`label` undefined). */
export interface OperatorCancel extends BulkCancelRequest {
  /** The registry the tenant must be in (the local service's by default). */
  readonly tenantsFile: string | undefined;
}

/**
 * Starts a job that cancels (or, dry, counts) a tenant's open events with a label, or all of
 * them, on the location's changes queue, and waits until it is done, passing each line of its
 * progress to `progress`; the job when done. `events cancel` and the console both run it.
 */
export async function cancelOpenEvents(
  location: Location,
  request: OperatorCancel,
  command: string,
  progress: (line: string) => void,
): Promise<BulkCancelJob> {
  const unregistered = unregisteredTenant(request.tenant, location, request.tenantsFile);
  if (unregistered !== '') throw new AdminError(`nothing to cancel: ${unregistered}`);
  return runBulkCancel(location, request, command, progress);
}

/**
 * Starts a bulk cancel job on the location's changes queue and waits until it is done, as
 * cancelByLabel does, whether or not the registry knows the tenant (`tenant remove` cancels what
 * a tenant it has just unregistered still has open).
 */
export async function runBulkCancel(
  location: Location,
  request: BulkCancelRequest,
  command: string,
  progress: (line: string) => void,
): Promise<BulkCancelJob> {
  const { tenant, label, dueBefore, dryRun } = request;
  return withChangesQueue(location, command, (sqs, queueUrl) =>
    withTable(location, async (client, tableName) => {
      const jobs = new DynamoDbBulkCancelJobs(client, tableName);
      const now = Date.now();
      const started = await startBulkCancel(
        {
          jobs,
          changesQueue: reportingRefusals(new SqsChangesQueue(sqs, queueUrl), queueUrl),
          logger: createLogger('silent'),
        },
        {
          jobId: bulkCancelJobId(randomUUID()),
          tenant,
          label,
          fromMs: now,
          dueBefore,
          failureTopic: undefined,
          dryRun,
          createdAt: now,
          expiresAt: expiresAtFor(now, DEFAULTS.retentionSeconds),
        },
      );
      const bound = dueBefore === undefined ? '' : `, due before ${toIso(dueBefore)}`;
      const which = label === undefined ? 'every open event and recurring series' : 'the open events';
      const labelled = label === undefined ? '' : ` labelled "${label}"`;
      progress(`job ${started.jobId}: ${dryRun ? 'counting' : 'cancelling'} ${which} of tenant ${tenant}${labelled}${bound}`);
      return waitForJob(jobs, started.jobId, progress);
    }),
  );
}

export async function eventsCancel(args: string[], output: Output): Promise<number> {
  const command = 'events cancel';
  const line = commandLine(
    command,
    args,
    {
      tenant: { type: 'string' },
      label: { type: 'string' },
      all: { type: 'boolean', default: false },
      'due-before': { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      tenants: { type: 'string' },
      ...LOCATION_OPTIONS,
    },
    { usage: USAGE.eventsCancel, output },
  );
  if (line === undefined) return 0;
  const { values, positionals } = line;
  noPositionals(positionals, command);
  const { tenant, label } = values;
  if (tenant === undefined) throw new AdminUsageError('--tenant is missing', command);
  if (label === undefined && !values.all) throw new AdminUsageError('--label is missing (or --all, for every open event)', command);
  if (label !== undefined && values.all) throw new AdminUsageError('give --label or --all, not both', command);
  if (label !== undefined && !isLabel(label))
    throw new AdminUsageError(`--label takes 1 to 64 of A-Z a-z 0-9 . _ : -, starting with a letter or digit, not "${label}"`, command);
  const dueBeforeText = values['due-before'];
  const dueBefore = dueBeforeText === undefined ? undefined : parseDueDate(dueBeforeText);
  if (dueBeforeText !== undefined && dueBefore === undefined)
    throw new AdminUsageError(`--due-before takes an ISO-8601 date-time, not "${dueBeforeText}"`, command);
  const location = locationOf(values, command);
  const job = await cancelOpenEvents(
    location,
    { tenant, label, dueBefore, dryRun: values['dry-run'], tenantsFile: values.tenants },
    command,
    (line) => output.out(line),
  );
  output.out(progressLine(job));
  return 0;
}
