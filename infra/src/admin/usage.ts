import { DEFAULT_QUOTAS, EVENT_STATE, REFUSALS_KEPT } from '@adhoc-scheduler/shared';
import { PEEK_VISIBILITY_SECONDS } from './dead-letters.js';
import { count } from './format.js';
import { REUSE_DAYS } from './removed-tenants.js';
import { PAST_SHOWN } from './series-view.js';

const STATES = Object.values(EVENT_STATE).join('|');

export const LIST_LIMIT = { default: 20, max: 100 } as const;
export const DEAD_LETTER_LIMIT = { default: 20, max: 1000 } as const;

const WHERE = `Where (local service by default):
  --outputs FILE          the local service's outputs (default .local/outputs.json, written by scripts/start)
  --stack-outputs FILE    a deployed stack: the JSON of cdk deploy --outputs-file (its TableName output)
  --table NAME            a deployed stack's table by name
  --region R              the deployed stack's region (default: the stack's Region output, else the AWS SDK's)
  --profile P             AWS credentials profile (default: the AWS SDK's default credential chain)
  --tenants FILE          the registry, to say so when a tenant is not in it (default, for the
                          local service, .local/tenants.json; a deployed stack's is not checked
                          unless named)
A deployed table is read with dynamodb:BatchGetItem (event show, series show, series list, events,
refusals) and dynamodb:Query on its index byTenantDue (events, series list); quota reconcile needs dynamodb:Scan (a filtered scan of the
whole table), and dynamodb:GetItem and dynamodb:UpdateItem on the tenant's counter item; table migrate
needs dynamodb:DescribeTable, dynamodb:Scan and dynamodb:UpdateItem on the table.`;

/** Where the commands that change tenants work, and what a stack's credentials need for them. */
const TENANT_PLACES = `Where: the local service (default: --tenants FILE, its registry, default .local/tenants.json;
--outputs FILE, its outputs) or a deployed stack (--stack-outputs FILE [--region R] [--profile P]):
there the registry is the stack's table, and each tenant's input topic is made in the stack's
account at runtime, named <prefix>-tenant-<id>, which the stack's ingest queue admits; no deploy.
The credentials need dynamodb:Query, BatchGetItem and BatchWriteItem on the table; sns:CreateTopic,
SetTopicAttributes, ListSubscriptionsByTopic, ListTagsForResource, Subscribe and DeleteTopic on the
tenants' topics; and for tenant remove, sqs:SendMessage on the changes queue (its bulk cancels).
A tenant of the stack's CDK configuration is the stack's to change: refused here.`;

export const USAGE = {
  main: `Operator commands for the scheduler: register tenants, look up events.

Usage:
  scripts/admin tenant add <id> --account ID [--account ID ...] [options]
  scripts/admin tenant import FILE
  scripts/admin tenant export
  scripts/admin tenant list [--prefix P] [--account ID] [--limit N] [--after ID] [--json]
  scripts/admin tenant pause <id> [--note TEXT] [where]
  scripts/admin tenant resume <id> [where]
  scripts/admin event show <event-id> [--json] [where]
  scripts/admin event show --tenant T --id CLIENT_ID [--user U] [--json] [where]
  scripts/admin series list --tenant T [--label L] [--limit N] [--after TOKEN] [--json] [where]
  scripts/admin series show <series-id|client-id> --tenant T [--user U] [--json] [where]
  scripts/admin events --tenant T [--label L] [--state S ...] [--from DATE] [--to DATE]
                       [--limit N] [--after TOKEN] [--json] [where]
  scripts/admin events cancel --tenant T --label L [--due-before DATE] [--dry-run] [where]
  scripts/admin refusals --tenant T [--limit N] [--json] [where]
  scripts/admin tail <topic-arn> [--json] [where]
  scripts/admin quota reconcile --tenant T [--json] [where]
  scripts/admin table migrate [--json] [where]
  scripts/admin dead-letters list|show|redrive|purge [--queue Q] [filters] [--json] [where]

${WHERE}

scripts/admin <command> --help explains each command. Relative paths are taken from the
repository root. Exit codes: 0 done, 1 failed (unknown event, service not running, invalid
tenant), 2 wrong command line.`,

  tenantAdd: `Registers a tenant on the local service or a deployed stack, or updates it: onboarding in one command.

Usage: scripts/admin tenant add <id> --account ID [--account ID ...] [--target-account ID ...]
                                [--dead-letter-topic ARN]
                                [--max-open-events N] [--max-ingest-per-second N]
                                [--max-control-per-second N]
                                [--user-optional] [--restore] [where]

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
  --max-control-per-second N  most control requests (cancel, reschedule, pause, resume, cancel
                              by label, a series' change) accepted per second (default ${count(DEFAULT_QUOTAS.maxControlPerSecond)})
  --user-optional             accept schedule requests without "user" (the original service's
                              ENFORCE_USER off); by default they are refused as MISSING_FIELD
  --restore                   register again an id removed less than ${REUSE_DAYS} days ago, for the same
                              client (without it, refused: see tenant remove)

Writes the tenant to the registry (the running service reads it within its cache's bound, no
restart needed), creates the tenant's input topic subscribed to the ingest queue, taking
publishes from the tenant's accounts only and over TLS only, and prints the topic's ARN on stdout. The entry becomes exactly what the command says: adding an id again
replaces its accounts, dead-letter topic, quotas and user switch (omitted ones go back to the defaults);
adding it again unchanged changes nothing. The local service must be running (scripts/start);
if it is not, or the registry would not be valid, nothing is written.

${TENANT_PLACES}`,

  tenantUpdate: `Changes some settings of a registered tenant, and keeps the others.

Usage: scripts/admin tenant update <id> [--account ID ...] [--target-account ID ...]
                                   [--dead-letter-topic ARN]
                                   [--max-open-events N] [--max-ingest-per-second N]
                                   [--max-control-per-second N]
                                   [--user-optional | --user-required] [where]

  <id>                        a registered tenant (tenant add registers one)
  --account ID ...            its accounts, all of them (repeatable), replacing those it has
  --target-account ID ...     the further accounts it may target, all of them, replacing its own
  --dead-letter-topic ARN     its dead-letter topic
  --max-open-events N, --max-ingest-per-second N, --max-control-per-second N
                              its quotas, each given one replacing the one it has
  --user-optional             accept its schedule requests without "user"
  --user-required             refuse them again (MISSING_FIELD), the default

Each setting a flag gives replaces the tenant's; the others stay as they are (tenant add, given
an id registered already, writes exactly what it says instead). The registry it makes is checked
as tenant add checks it, and nothing is written when it breaks a rule; new accounts are given
the input topic's policy. The running service reads the change within its cache's bound. Prints
the settings before and after, and the input topic's ARN.

${TENANT_PLACES}`,

  tenantShow: `Shows one tenant: its settings, input topic, pause and open events.

Usage: scripts/admin tenant show <id> [--json] [--tenants FILE] [--outputs FILE]
       scripts/admin tenant show <id> [--json] --stack-outputs FILE | --table NAME

  <id>              the tenant (public for the shared input topic's)
  --json            one JSON document (tenant list's fields, and openEvents)
  --tenants FILE    the local service's registry (default .local/tenants.json); a deployed
                    stack's is its table

Its open events are its quota counter's count (scripts/admin quota reconcile recounts them). A
tenant that is not registered is an error (exit code 1), saying when it was removed and until
when its id is still its own, if it was.`,

  tenantImport: `Registers the tenants of a tenants file, or updates them: bulk onboarding, or a backup
(tenant export) put back.

Usage: scripts/admin tenant import FILE [--restore] [where]

  FILE              a tenants file (the format of .local/tenants.json and of tenant export)
  --restore         register again ids removed less than ${REUSE_DAYS} days ago, for the same clients

Each tenant in FILE replaces the entry of its id, as tenant add does, or is added; a "public"
section replaces the public tenant's settings. Tenants FILE does not name are left as they are:
an import removes no one. The registry it makes is checked as a whole (accounts, dead-letter
topics) before anything is written; then every named tenant's input topic is created (or found)
on the ingest queue, the registry is written once, and each tenant is printed on stdout with its
topic's ARN after a space. The local service must be running (scripts/start).

${TENANT_PLACES}`,

  tenantRemove: `Removes a tenant: its input topic, then its registry entry.

Usage: scripts/admin tenant remove <id> [--cancel-open] [where]

  <id>              a registered tenant, not "public"
  --cancel-open     cancel its open events and active recurring series first (bulk cancel
                    jobs), and wait for those due within the change cutoff to be emitted;
                    without it, a tenant with any open is refused and nothing changes

Counts the tenant's open events (a scan of the table); deletes its input topic, so that SNS
refuses what it publishes from then on; with --cancel-open, cancels what is open, printing the
jobs' counts; writes the registry without it; cancels what it published before its topic went
and the service took meanwhile; and deletes its counters, pauses and kept refusals. Its events'
records stay for their retention. For ${REUSE_DAYS} days (the longest its records, notices and
dead letters may outlive it) the id stays its own: tenant add or import of it is refused, but with
--restore, which gives it back to the same client. A removal that stops half-way (an open event
left, the service stopped) says so; running it again goes on.

${TENANT_PLACES}`,

  tenantExport: `Prints the registry as a tenants file, for a backup or a bulk change (tenant import
takes it back).

Usage: scripts/admin tenant export [--tenants FILE | --stack-outputs FILE | --table NAME]

  --tenants FILE    the local service's registry (default .local/tenants.json); none registered prints {}
  --stack-outputs FILE, --table NAME
                    a deployed stack, whose registry is its table (dynamodb:Query, BatchGetItem)`,

  tenantList: `Lists the tenants, the public one (the shared input topic's) first: accounts,
accounts they may target, quotas, input topic ARNs and dead-letter topics.

Usage: scripts/admin tenant list [--prefix P] [--account ID] [--limit N] [--after ID] [--json]
                                 [--tenants FILE] [--outputs FILE]
       scripts/admin tenant list [options] --stack-outputs FILE | --table NAME

  --prefix P              only the tenants whose id starts with P
  --account ID            only the tenants with this account of their own
  --limit N               tenants per page, 1 to ${LIST_LIMIT.max} (default ${LIST_LIMIT.default}); the public tenant
                          first, then by id
  --after ID              the page after the one that ended with this tenant (what a page
                          prints as its next page)
  --json                  one JSON document instead of a table (next: the next page's --after, or null)
  --tenants FILE          the local service's tenants file, as the other commands take it: the
                          listing reads the registry in force, which the service applies the
                          file to, from its table (as on a deployed stack)
  --outputs FILE          the local service's outputs (default .local/outputs.json)
  --stack-outputs FILE    a deployed stack's outputs: the ARNs follow from its InputTopicArn

A page reads its tenants' ids from the registry's listing table (by id prefix) or an account's
owners item (by account), then their entries by key: the same reads however many are registered.
A PAUSED column says whose pause it is (the operator's, or the tenant's own request), since when
and why a tenant is paused (see tenant pause), read from the table: when it cannot be read, the
listing says so and shows none.`,
  tenantPause: `Pauses a tenant: from the emitter's next read of its pause (within a second or two), its
events are held as they come due instead of published, until tenant resume. Events not yet due
are untouched; new events are still taken; cancel and reschedule still apply to held events.

Usage: scripts/admin tenant pause <id> [--note TEXT] [where]

  <id>          the tenant ("public" for the shared input topic)
  --note TEXT   why, shown by tenant list

The pause is the operator's: the tenant's own resume neither lifts nor shortens it (the tenant
is told so on its failure topic, PAUSED_BY_OPERATOR). Pausing a paused tenant keeps its start
and takes the new note. A deployed stack is written
with dynamodb:UpdateItem on the tenant's counter item.

${WHERE}`,
  tenantResume: `Resumes a paused tenant: ends the operator's pause, then, unless the tenant paused
itself too (that pause stands until its own resume, and the command says so), sends the events
held during it, oldest first, each published at once, late by its pause (its
scheduler-scheduled-at attribute says when it was due). Events coming due from now on are published on time.

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

A request refused at ingest made no event: for its id (the one it named, or would have created)
the command shows the refusal instead, "refused at ingest: <REASON>", with its message and time,
if it is among the tenant's latest refusals (see refusals --help; a bare event id is looked for
among the public tenant's and the registry's tenants').

Exit code 1 when there is no such event nor refusal (an ended event is kept for the retention
period), saying so when the tenant is not registered.

${WHERE}`,

  seriesList: `Lists a tenant's recurring series, a page at a time: each with its id, state, schedule
and zone, and its next occurrence in the series' zone and in UTC. It reads the tenant index and
the records it shows, never the whole table.

Usage: scripts/admin series list --tenant T [--label L] [--limit N] [--after TOKEN] [--json]
                                 [--shard-count N] [where]

  --tenant T        the tenant ("public" for the shared input topic)
  --label L         only its series with this label
  --limit N         series per page, 1 to ${LIST_LIMIT.max} (default ${LIST_LIMIT.default})
  --after TOKEN     the next page: the token printed under the previous one
  --json            {"series": [...], "next": TOKEN or null}, times as ISO 8601
  --shard-count N   the scheduler's SCHEDULER_SHARD_COUNT, for a table named by --table

In the order of each series' next occurrence not yet materialised (the index's order; the next
one shown may be one already materialised, due sooner); with --label, of each series' first
occurrence, where its label entry stands. A series leaves the index when it ends: the listing
holds the active series (one that ended while it was read is shown with its state); series show
finds an ended one by its id. The index holds the tenant's stored events too, which the listing
reads past (their keys, not their records). A last page may be empty. Exit code 1 when the
tenant is not registered and has no series.

${WHERE}`,

  seriesShow: `Shows one recurring series: its schedule, zone and daylight-saving rule, its state,
how many of its occurrences have come due, the next ones, each in the series' zone and in UTC,
and the last ${PAST_SHOWN} that came due with the state of the event each became and its lateness.

Usage: scripts/admin series show <series-id> --tenant T [--json] [where]
       scripts/admin series show <client-id> --tenant T [--user U] [--json] [where]

  <series-id>      the scheduler's id: s-m-<SNS MessageId>, or s-c-... for a request with an "id"
  <client-id>      the "id" the client gave in its request
  --tenant T       whose series it is ("public" for the shared input topic)
  --user U         the request's "user": needed for the public tenant's client ids, which are per user
  --json           the record as JSON, times as ISO 8601, with "fired", "next" and "last"

"fired" counts the occurrences due so far, those the catch-up window skipped included; a next
occurrence marked "materialised" is an event already (see event show). A last occurrence's
lateness runs from its due time to the answer of its publish; one "not found" has no event:
expired (the retention period after its end), or never made (skipped by the catch-up window,
refused over the tenant's quota). Exit code 1 when the tenant has no such series (an ended one
is kept for the retention period).

${WHERE}`,

  events: `Lists a tenant's events, a page at a time, in due order: its open ones by default, or those
with a label, in a range of due times, in the states asked for. It reads the tenant index and
the records it shows, never the whole table.

Usage: scripts/admin events --tenant T [--label L] [--state S ...] [--from DATE] [--to DATE]
                            [--limit N] [--after TOKEN] [--json] [--shard-count N] [where]

  --tenant T        the tenant ("public" for the shared input topic)
  --label L         only its events with this label
  --state S         only events in this state, repeatable: ${STATES}
                    (default: the open ones, scheduled and queued)
  --from DATE       only events due at or after this ISO-8601 date-time
  --to DATE         only events due before this one
  --limit N         events per page, 1 to ${LIST_LIMIT.max} (default ${LIST_LIMIT.default})
  --after TOKEN     the next page: the token printed under the previous one
  --json            {"events": [...], "next": TOKEN or null}, times as ISO 8601
  --shard-count N   the scheduler's SCHEDULER_SHARD_COUNT, for a table named by --table (the
                    local service's outputs and a stack's ShardCount output say it otherwise)

Events stored before the tenant index existed are not listed (they end, and expire, as before).
An occurrence of a recurring series is listed with its series (series show) and under its
labels, and here once it has failed, been held or been rescheduled into the table; a listing
without --label says so on stderr when its states may leave one out. A last page may be empty. Exit code 1 when the tenant is not registered and has no such events
(a tenant removed from the registry still has its events listed). To cancel a tenant's events
with a label: scripts/admin events cancel --help.

${WHERE}`,

  eventsCancel: `Cancels a tenant's open events with a label (due before a date, when given), as
the tenant's own cancel by label does, or all its open events and active recurring series (--all:
before removing the tenant from a deployed stack, say): a job worked page by page by the
scheduler's changes function. Waits for it, showing its counts as they move, and prints them: cancelled; refused
because already ended, or due within the change cutoff (they will be emitted).

Usage: scripts/admin events cancel --tenant T (--label L | --all) [--due-before DATE] [--dry-run] [where]

  --tenant T          whose events ("public" for the shared input topic's)
  --label L           the label: 1 to 64 of A-Z a-z 0-9 . _ : -, starting with a letter or digit
  --all               every open event and active recurring series of the tenant, labelled or not
                      (those in the delay queue only under SCHEDULER_INDEX_QUEUED_EVENTS=false are
                      in no listing, and not among them)
  --due-before DATE   only events due before this ISO-8601 date-time
  --dry-run           counts what the job would cancel, and changes no event

The job covers the events due from when it starts: earlier ones are past the change cutoff.
Stopping the command does not stop the job. Exit code 1 when the tenant is not registered, or
when the job stands still for two minutes (the service, or its changes function, is not
running: the job goes on when it runs).

A deployed stack is named by --stack-outputs FILE (its ChangesQueueUrl output: the job starts
there); it needs dynamodb:UpdateItem and dynamodb:BatchGetItem on the table (the job's item)
and sqs:SendMessage on the changes queue.

${WHERE}`,

  deadLetters: `Looks at, redrives and purges the messages the scheduler's queues set aside after
failing them on every delivery, each with the last error of the function that failed it.

Usage: scripts/admin dead-letters list [--queue Q] [filters] [--limit N] [--json] [where]
       scripts/admin dead-letters show <message-id> [--queue Q] [--json] [where]
       scripts/admin dead-letters redrive [--queue Q] [filters] [--limit N] [--dry-run] [--json] [where]
       scripts/admin dead-letters purge [--queue Q] [filters] [--limit N] --yes [--json] [where]

  --queue Q     ingest, public-ingest, loading, delay, changes, or all (default): whose dead
                letters (the local service has one dead-letter queue for all: the body tells)
  --tenant T    only messages of this tenant ("public" for the shared input topic)
  --event ID    only messages naming this event id
  --label L     only messages whose body carries this label
  --limit N     at most N messages (list: 1 to ${DEAD_LETTER_LIMIT.max}, default ${DEAD_LETTER_LIMIT.default}; others: all by default)
  --dry-run     redrive: say what would be sent back, send and delete nothing
  --yes         purge: required, as purged messages are gone for good
  --json        one JSON document

list shows each message's id, queue, receives (the tools' own peeks count too), first sent
time, tenant, event ids, labels and the last error (function, error, time). Messages are
peeked: each is hidden for at most ${PEEK_VISIBILITY_SECONDS} s while the command runs and let go when it ends.
redrive sends each chosen message back to its queue, then deletes it from the dead-letter
queue; a delay-queue event is sent with the delay ingest would give it. The emitter decides by
the event's record, so a redriven copy is never emitted early, nor when its event has ended,
been cancelled or moved on. purge deletes the chosen messages.

Where: the local service (default, --outputs FILE) or a deployed stack (--stack-outputs FILE,
whose outputs name each queue and its dead-letter queue; --region, --profile). On AWS it needs
sqs:ReceiveMessage, sqs:ChangeMessageVisibility and sqs:DeleteMessage on the dead-letter
queues, sqs:SendMessage on the queues (redrive), and dynamodb:BatchGetItem on the table (the
last errors, items e#<message id>).`,

  refusals: `Lists a tenant's latest requests refused at ingest, newest first: when, the client's id and
user, what it asked (schedule, cancel, ...), the reason code and its message. Each was also
reported on the request's failure topic (or the tenant's dead-letter topic) and logged.

Usage: scripts/admin refusals --tenant T [--limit N] [--json] [where]

  --tenant T   whose refusals ("public" for the shared input topic)
  --limit N    at most N, 1 to ${REFUSALS_KEPT.perTenant} (default all kept)
  --json       {"refusals": [...], "refused": N, "notKept": N}, times as ISO 8601: refused
               counts every refusal since the tenant's first (within the retention period),
               notKept those only counted

The scheduler keeps a tenant's latest ${REFUSALS_KEPT.perTenant} refusals, for the retention period at most. Under
a flood it keeps at most ${REFUSALS_KEPT.perTenantPerBatch} of a tenant's refusals from one ingest batch and counts
the others: the line under the listing (on stderr) says how many were only counted. Exit
code 1 when the tenant is not registered.

${WHERE}`,

  tail: `Watches a topic: prints each message published to it as it arrives, with its message
attributes, until Ctrl-C. For a target topic (deliveries), a failure topic or a dead-letter
topic (failure notices).

Usage: scripts/admin tail <topic-arn> [--json] [where]

  <topic-arn>   the SNS topic to watch
  --json        one JSON object a line: {"receivedAt", "attributes", "body"}

It creates a temporary SQS queue that only this topic may send to, subscribes it with raw
message delivery (the message and its attributes as published), and on Ctrl-C (or SIGTERM)
unsubscribes it and deletes the queue. Messages published before it subscribed are not shown.
A deployed stack's topic is reached with --stack-outputs FILE (its Region output), --region and
--profile; it needs sns:Subscribe and sns:Unsubscribe on the topic, and sqs:CreateQueue,
sqs:GetQueueAttributes, sqs:SetQueueAttributes, sqs:ReceiveMessage, sqs:DeleteMessage and sqs:DeleteQueue on queues
named adhoc-scheduler-tail-*.

Where: the local service (default, --outputs FILE) or a deployed stack (--stack-outputs FILE,
--region R, --profile P).`,

  quotaReconcile: `Recounts a tenant's open events (scheduled, queued or held) and corrects its open-events quota
counter by the difference.

Usage: scripts/admin quota reconcile --tenant T [--json] [where]

The counter errs high, never low: a place is freed only when the end that frees it is known to
be recorded, so a lost answer, a crash or an event deleted by its retention period can leave it
too high, and the tenant refused a little early. The count reads every item of the table (a
filtered scan, no writes but the correction). Events that start or end while it runs may or may
not be counted: the correction is exact when none did, and the command says when some did.

Exit code 1 when the tenant is not registered: it has no quota to correct, and nothing is read.

${WHERE}`,

  tableMigrate: `Moves a table an earlier version created off its second index, byDueBucket, into the one index
this version keeps, byTenantDue (docs/operators/aws.md, "Upgrading to one table index").

Usage: scripts/admin table migrate [--json] [where]

Scans the table for items with a bucketShard key (the old index's) and, each with an update
that applies only while that key is still the one read, lists an event stored before the tenant
index under its tenant's stored partition (<tenant>#s<shard>), a held event under its tenant's
held partition (<tenant>#h<shard>), and removes bucketShard. While the table still has
byDueBucket (the version before is deployed), held events stay in it, where that version's
resume reads them: run it again after the deploy that removes the index to move them. Running
it again changes nothing more; it may run alongside the service. The local service does this
itself at start.

${WHERE}`,
} as const;
