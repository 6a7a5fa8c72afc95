import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import {
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
import { HELP_OPTION, LOCATION_OPTIONS, parseOrExplain } from './arguments.js';
import { AdminError, AdminUsageError } from './errors.js';
import type { Output } from './format.js';
import { locationOf, withChangesQueue, withTable } from './location.js';
import { unregisteredTenant } from './tenant-commands.js';
import { USAGE } from './usage.js';

/** How often the job's item is read while waiting for it. */
const POLL_MS = 250;
/** How long a job may stand still before the command stops waiting (the job itself goes on). */
const STALL_MS = 120_000;

function progressLine(job: BulkCancelJob): string {
  return `${job.state === 'done' ? 'done' : 'working'}: ${describeCounts(job.counts, job.dryRun)}`;
}

/**
 * Waits for a job, printing its counts as they move, until it is done; an AdminError when it
 * stands still for STALL_MS (nothing works its pages: the service is stopped, or a page keeps failing).
 */
async function waitForJob(jobs: DynamoDbBulkCancelJobs, jobId: string, output: Output): Promise<BulkCancelJob> {
  let shown = '';
  let movedAt = Date.now();
  for (;;) {
    const job = await jobs.get(jobId);
    if (job === undefined) throw new AdminError(`job ${jobId} is gone`);
    const line = progressLine(job);
    if (line !== shown) {
      if (job.state === 'done') return job;
      output.out(line);
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

export async function eventsCancel(args: string[], output: Output): Promise<number> {
  const command = 'events cancel';
  const { values, positionals } = parseOrExplain(command, () =>
    parseArgs({
      args,
      allowPositionals: true,
      options: {
        tenant: { type: 'string' },
        label: { type: 'string' },
        'due-before': { type: 'string' },
        'dry-run': { type: 'boolean', default: false },
        tenants: { type: 'string' },
        ...LOCATION_OPTIONS,
        ...HELP_OPTION,
      },
    }),
  );
  if (values.help) {
    output.out(USAGE.eventsCancel);
    return 0;
  }
  if (positionals.length > 0) throw new AdminUsageError(`unexpected arguments: ${positionals.join(' ')}`, command);
  const { tenant, label } = values;
  if (tenant === undefined) throw new AdminUsageError('--tenant is missing', command);
  if (label === undefined) throw new AdminUsageError('--label is missing', command);
  if (!isLabel(label))
    throw new AdminUsageError(`--label takes 1 to 64 of A-Z a-z 0-9 . _ : -, starting with a letter or digit, not "${label}"`, command);
  const dueBeforeText = values['due-before'];
  const dueBefore = dueBeforeText === undefined ? undefined : parseDueDate(dueBeforeText);
  if (dueBeforeText !== undefined && dueBefore === undefined)
    throw new AdminUsageError(`--due-before takes an ISO-8601 date-time, not "${dueBeforeText}"`, command);
  const location = locationOf(values, command);
  const unregistered = unregisteredTenant(tenant, location, values.tenants);
  if (unregistered !== '') throw new AdminError(`nothing to cancel: ${unregistered}`);
  const dryRun = values['dry-run'];

  const job = await withChangesQueue(location, command, (sqs, queueUrl) =>
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
          jobId: `b-${randomUUID()}`,
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
      output.out(
        `job ${started.jobId}: ${dryRun ? 'counting' : 'cancelling'} the open events of tenant ${tenant} labelled "${label}"${bound}`,
      );
      return waitForJob(jobs, started.jobId, output);
    }),
  );
  output.out(progressLine(job));
  return 0;
}
