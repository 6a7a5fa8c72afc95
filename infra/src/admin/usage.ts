import { DEFAULT_QUOTAS, EVENT_STATE } from '@adhoc-scheduler/shared';
import { CDK_TENANTS } from './location.js';

const count = (value: number): string => value.toLocaleString('en-US');
const STATES = Object.values(EVENT_STATE).join('|');

export const LIST_LIMIT = { default: 20, max: 100 } as const;

const WHERE = `Where (local service by default):
  --outputs FILE          the local service's outputs (default .local/outputs.json, written by scripts/start)
  --stack-outputs FILE    a deployed stack: the JSON of cdk deploy --outputs-file (its TableName output)
  --table NAME            a deployed stack's table by name
  --region R              the deployed stack's region (default: the stack's Region output, else the AWS SDK's)
  --profile P             AWS credentials profile (default: the AWS SDK's default credential chain)
  --tenants FILE          the registry, to say so when a tenant is not in it (default, for the
                          local service, .local/tenants.json; a deployed stack's is not checked
                          unless named)
A deployed table is read with dynamodb:BatchGetItem (event show) and dynamodb:Scan (events,
a filtered scan: it reads the table, it writes nothing); quota reconcile also needs
dynamodb:GetItem and dynamodb:UpdateItem on the tenant's counter item.`;

export const USAGE = {
  main: `Operator commands for the scheduler: register tenants, look up events.

Usage:
  scripts/admin tenant add <id> --account ID [--account ID ...] [options]
  scripts/admin tenant list [--json]
  scripts/admin tenant pause <id> [--note TEXT] [where]
  scripts/admin tenant resume <id> [where]
  scripts/admin event show <event-id> [--json] [where]
  scripts/admin event show --tenant T --id CLIENT_ID [--user U] [--json] [where]
  scripts/admin events --tenant T --state ${STATES} [--limit N] [--after TOKEN] [--json] [where]
  scripts/admin quota reconcile --tenant T [--json] [where]

${WHERE}

scripts/admin <command> --help explains each command. Relative paths are taken from the
repository root. Exit codes: 0 done, 1 failed (unknown event, service not running, invalid
tenant), 2 wrong command line.`,

  tenantAdd: `Registers a tenant on the local service, or updates it: onboarding in one command.

Usage: scripts/admin tenant add <id> --account ID [--account ID ...] [--target-account ID ...]
                                [--dead-letter-topic ARN]
                                [--max-open-events N] [--max-ingest-per-second N]
                                [--tenants FILE] [--outputs FILE]

  <id>                        lowercase letters, digits and hyphens, at most 40, not "public";
                              names the tenant's input topic (adhoc-scheduler-tenant-<id>)
  --account ID                an AWS account of the tenant (12 digits), repeatable: the only
                              publishers its input topic admits, and whose topics it may target
  --target-account ID         a further account whose topics the tenant may target, repeatable;
                              never another tenant's own account
  --dead-letter-topic ARN     an SNS topic, in an account the tenant may target, that receives the
                              notices no usable failure topic takes (not JSON, no failure topic,
                              one it may not use, one that refuses the notice)
  --max-open-events N         most events scheduled and not yet ended (default ${count(DEFAULT_QUOTAS.maxOpenEvents)})
  --max-ingest-per-second N   most new events accepted per second (default ${count(DEFAULT_QUOTAS.maxIngestPerSecond)})
  --tenants FILE              the registry the service was started with (default .local/tenants.json)
  --outputs FILE              the running service's outputs (default .local/outputs.json)

Writes the tenant to the tenants file (the running service reads it again, no restart needed),
creates the tenant's input topic subscribed to the service's ingest queue, and prints the
topic's ARN on stdout. The entry becomes exactly what the command says: adding an id again
replaces its accounts, dead-letter topic and quotas (omitted quotas go back to the defaults);
adding it again unchanged changes nothing. The service must be running (scripts/start); if it
is not, or the registry would not be valid, nothing is written.

Local service only: on AWS, tenants are registered in the CDK app's configuration
(${CDK_TENANTS}), then deployed.`,

  tenantList: `Lists the tenants, the public one (the shared input topic's) first: accounts,
accounts they may target, quotas, input topic ARNs and dead-letter topics.

Usage: scripts/admin tenant list [--json] [--tenants FILE] [--outputs FILE]
       scripts/admin tenant list [--json] --tenants FILE --stack-outputs FILE

  --json                  one JSON document instead of a table
  --tenants FILE          the registry (default .local/tenants.json); for a deployed stack, the
                          file it was deployed with
  --outputs FILE          the local service's outputs, for the topic ARNs (default .local/outputs.json)
  --stack-outputs FILE    a deployed stack's outputs: the ARNs follow from its InputTopicArn

A PAUSED column says since when and why a tenant is paused (see tenant pause), read from the
table: when it cannot be read, the listing says so and shows none.`,
  tenantPause: `Pauses a tenant: from the emitter's next read of its pause (within a second or two), its
events are held as they come due instead of published, until tenant resume. Events not yet due
are untouched; new events are still taken; cancel and reschedule still apply to held events.

Usage: scripts/admin tenant pause <id> [--note TEXT] [where]

  <id>          the tenant ("public" for the shared input topic)
  --note TEXT   why, shown by tenant list

Pausing a paused tenant keeps its start and takes the new note. A deployed stack is written
with dynamodb:UpdateItem on the tenant's counter item.

${WHERE}`,
  tenantResume: `Resumes a paused tenant: ends the pause, then sends the events held during it, oldest
first, each published at once, late by its pause (its scheduler-scheduled-at attribute says
when it was due). Events coming due from now on are published on time.

Usage: scripts/admin tenant resume <id> [where]

The sending is a job of the changes function, a page of 100 events at a time: the command
returns once the job is started. Resuming a tenant that is not paused sends any event of it
still held. A deployed stack needs --stack-outputs (its ChangesQueueUrl output), and
dynamodb:UpdateItem on the tenant's counter item and sqs:SendMessage on the changes queue.

${WHERE}`,
  eventShow: `Shows one event: state, due time, version, tenant, user, target, and when it was
created, queued, rescheduled, emitted, failed or cancelled.

Usage: scripts/admin event show <event-id> [--json] [where]
       scripts/admin event show --tenant T --id CLIENT_ID [--user U] [--json] [where]

  <event-id>       the scheduler's id: c-... for a request with an "id", m-<SNS MessageId> without
  --tenant T       with --id: whose request it was ("public" for the shared input topic)
  --id CLIENT_ID   the "id" the client gave in its request
  --user U         the request's "user": needed for the public tenant, whose ids are per user
  --json           the record as JSON, times as ISO 8601

Exit code 1 when there is no such event (an ended event is kept for the retention period),
saying so when the tenant is not registered.

${WHERE}`,

  events: `Lists a tenant's events in one state, a page at a time (in the table's order).

Usage: scripts/admin events --tenant T --state STATE [--limit N] [--after TOKEN] [--json] [where]

  --tenant T      the tenant ("public" for the shared input topic)
  --state STATE   scheduled (stored for the loader), queued (in the delay queue), emitted,
                  failed or cancelled
  --limit N       events per page, 1 to ${LIST_LIMIT.max} (default ${LIST_LIMIT.default})
  --after TOKEN   the next page: the token printed under the previous one
  --json          {"events": [...], "next": TOKEN or null}, times as ISO 8601

Exit code 1 when the tenant is not registered and has no such events (a tenant removed from
the registry still has its events listed).

${WHERE}`,

  quotaReconcile: `Recounts a tenant's open events (scheduled or queued) and corrects its open-events quota
counter by the difference.

Usage: scripts/admin quota reconcile --tenant T [--json] [where]

The counter errs high, never low: a place is freed only when the end that frees it is known to
be recorded, so a lost answer, a crash or an event deleted by its retention period can leave it
too high, and the tenant refused a little early. The count reads every item of the table (a
filtered scan, no writes but the correction). Events that start or end while it runs may or may
not be counted: the correction is exact when none did, and the command says when some did.

Exit code 1 when the tenant is not registered: it has no quota to correct, and nothing is read.

${WHERE}`,
} as const;
