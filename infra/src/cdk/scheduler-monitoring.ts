import { METRICS_NAMESPACE, type MetricName } from '@adhoc-scheduler/shared';
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { NodeFunction } from './node-function.js';
import { SCHEDULER_FUNCTIONS, type SchedulerFunctionName } from './paths.js';

/** Every metric the functions emit (EMF, namespace AdhocScheduler, dimension `service` = function name). */
export type SchedulerMetricName = MetricName | 'EmitLatenessMs' | 'LoaderBacklogSeconds';

export interface DeadLetters {
  readonly queue: sqs.IQueue;
  /** What waits there, for the alarm's description: "<holds> wait in a dead-letter queue". */
  readonly holds: string;
}

export interface SchedulerMonitoringProps {
  readonly functions: Readonly<Record<SchedulerFunctionName, NodeFunction>>;
  /** Dead-letter queues by the name of what they serve (names the alarm and the dashboard line). */
  readonly deadLetterQueues: Readonly<Record<string, DeadLetters>>;
  /** The ingest buffer queues by whose requests they hold, for the dashboard: a flood shows as one queue's backlog. */
  readonly ingestQueues: Readonly<Record<string, sqs.IQueue>>;
  /** The delay queue, whose messages the emitters hold until due: its in-flight count has a quota. */
  readonly delayQueue: sqs.IQueue;
  /** The table of stored events and the names of its indexes, whose throttled writes are alarmed. */
  readonly table: dynamodb.ITable;
  readonly indexNames: readonly string[];
  /**
   * The account's Lambda concurrency quota in the region, for the alarm at 80% of it. Default:
   * 1,000, AWS's default; give the raised quota once it is raised.
   */
  readonly accountConcurrencyQuota?: number;
  /** Alarm when the p99 of emit lateness stays above this. Default: 1,000 ms. */
  readonly latenessAlarmThresholdMs?: number;
  /**
   * Alarm when the loader starts its ticks this far behind the present. Default: 0 s, any
   * backlog: events coming due are already late.
   */
  readonly loaderBacklogAlarmSeconds?: number;
  /** Where alarms notify. Default: nowhere (the alarms still show in the console). */
  readonly alarmTopic?: sns.ITopic;
  readonly dashboardName?: string;
}

const PERIOD = Duration.minutes(1);

/**
 * Messages one standard queue may hold received and not yet deleted (SQS's quota, "approximately
 * 120,000"); the delay queue's emitters hold each event until it is due (docs/operators/capacity.md).
 */
export const SQS_IN_FLIGHT_QUOTA = 120_000;
/** AWS's default concurrency quota of an account's Lambda functions in a region. */
export const DEFAULT_ACCOUNT_CONCURRENCY_QUOTA = 1_000;
/** The capacity alarms fire at this share of their quota: late enough to mean it, early enough to ask for more. */
export const CAPACITY_ALARM_SHARE = 0.8;

export function schedulerMetric(
  metricName: SchedulerMetricName,
  service: SchedulerFunctionName,
  statistic: string,
  label?: string,
): cloudwatch.Metric {
  return new cloudwatch.Metric({ namespace: METRICS_NAMESPACE, metricName, dimensionsMap: { service }, statistic, period: PERIOD, label });
}

/**
 * Metrics counted by reason code (`reason` dimension alongside `service`): one line per
 * function and reason, whichever reasons occur.
 */
function byReason(metricName: SchedulerMetricName): cloudwatch.MathExpression {
  return new cloudwatch.MathExpression({
    expression: `SEARCH('{${METRICS_NAMESPACE},reason,service} MetricName="${metricName}"', 'Sum', ${PERIOD.toSeconds()})`,
    label: '',
    period: PERIOD,
  });
}

/** The metrics of the capacity alarms, graphed on the dashboard too. */
interface CapacityMetrics {
  readonly delayInFlight: cloudwatch.Metric;
  readonly accountConcurrency: cloudwatch.Metric;
  readonly accountQuota: number;
  readonly writeThrottles: cloudwatch.MathExpression;
}

/** The scheduler's alarms and its dashboard: lateness, throughput, failures, backlog, changes and refusals. */
export class SchedulerMonitoring extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly dashboard: cloudwatch.Dashboard;

  private readonly alarmAction: actions.SnsAction | undefined;
  private readonly latenessThreshold: number;

  constructor(scope: Construct, id: string, props: SchedulerMonitoringProps) {
    super(scope, id);
    this.latenessThreshold = props.latenessAlarmThresholdMs ?? 1000;
    this.alarmAction = props.alarmTopic ? new actions.SnsAction(props.alarmTopic) : undefined;
    this.addPathAlarms(props);
    const capacity = this.addCapacityAlarms(props);
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: props.dashboardName,
      defaultInterval: Duration.hours(3),
    });
    this.addPathWidgets(props);
    this.addQueueWidgets(props);
    this.addCapacityWidgets(props, capacity);
  }

  private alarm(alarmId: string, alarmProps: cloudwatch.AlarmProps): cloudwatch.Alarm {
    const created = new cloudwatch.Alarm(this, alarmId, alarmProps);
    if (this.alarmAction) created.addAlarmAction(this.alarmAction);
    this.alarms.push(created);
    return created;
  }

  /** Along an event's path: dead letters, lateness, the functions' errors and throttles, the loader's backlog. */
  private addPathAlarms(props: SchedulerMonitoringProps): void {
    for (const [name, { queue, holds }] of Object.entries(props.deadLetterQueues)) {
      this.alarm(`${name}DeadLettersAlarm`, {
        alarmDescription: `${holds[0]?.toUpperCase()}${holds.slice(1)} wait in a dead-letter queue`,
        metric: queue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }),
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    }

    this.alarm('EmitLatenessAlarm', {
      alarmDescription: `p99 of emit lateness above ${this.latenessThreshold} ms in 3 of the last 5 minutes`,
      metric: schedulerMetric('EmitLatenessMs', 'emitter', 'p99'),
      threshold: this.latenessThreshold,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
      // No events emitted is not lateness.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    for (const name of SCHEDULER_FUNCTIONS) {
      const fn = props.functions[name].function;
      const label = `${name[0]?.toUpperCase()}${name.slice(1)}`;
      this.alarm(`${label}ErrorsAlarm`, {
        alarmDescription: `The ${name} function failed invocations (not single records, which are retried)`,
        metric: fn.metricErrors({ period: PERIOD, statistic: 'Sum' }),
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      this.alarm(`${label}ThrottlesAlarm`, {
        alarmDescription: `The ${name} function was throttled: concurrency ran out`,
        metric: fn.metricThrottles({ period: PERIOD, statistic: 'Sum' }),
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    }

    // The loader reports its backlog on every tick, 0 when on time. Missing data leaves the
    // alarm in INSUFFICIENT_DATA, which also notifies: the loader is not running at all.
    const loaderBehind = this.alarm('LoaderBacklogAlarm', {
      alarmDescription: 'The loader starts its ticks behind the present: stored events are loaded late (or no tick ran)',
      metric: schedulerMetric('LoaderBacklogSeconds', 'loader', 'Maximum'),
      threshold: props.loaderBacklogAlarmSeconds ?? 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      // Three ticks in a row: the first tick after a deployment catches up on purpose.
      evaluationPeriods: 3,
      treatMissingData: cloudwatch.TreatMissingData.MISSING,
    });
    if (this.alarmAction) loaderBehind.addInsufficientDataAction(this.alarmAction);
  }

  /** The limits an event's path meets before it is late; their metrics, for the dashboard. */
  private addCapacityAlarms(props: SchedulerMonitoringProps): CapacityMetrics {
    // Limits an event's path meets before it is late (docs/operators/capacity.md): the delay
    // queue's in-flight quota, the account's concurrency, the table's and its indexes' throughput.
    const inFlightThreshold = Math.floor(SQS_IN_FLIGHT_QUOTA * CAPACITY_ALARM_SHARE);
    const delayInFlight = props.delayQueue.metricApproximateNumberOfMessagesNotVisible({ period: PERIOD, statistic: 'Maximum' });
    this.alarm('DelayQueueInFlightAlarm', {
      alarmDescription: `The emitters hold over ${inFlightThreshold} delay-queue messages at once: at about ${SQS_IN_FLIGHT_QUOTA} SQS hands out no more, and events come late`,
      metric: delayInFlight,
      threshold: inFlightThreshold,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    const accountQuota = props.accountConcurrencyQuota ?? DEFAULT_ACCOUNT_CONCURRENCY_QUOTA;
    const concurrencyThreshold = Math.floor(accountQuota * CAPACITY_ALARM_SHARE);
    const accountConcurrency = new cloudwatch.Metric({
      namespace: 'AWS/Lambda',
      metricName: 'ConcurrentExecutions',
      statistic: 'Maximum',
      period: PERIOD,
    });
    this.alarm('AccountConcurrencyAlarm', {
      alarmDescription: `The account's Lambda functions run over ${concurrencyThreshold} at once, of a quota of ${accountQuota}: beyond it every function is throttled`,
      metric: accountConcurrency,
      threshold: concurrencyThreshold,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    const tableName = props.table.tableName;
    const throttles = (metricName: 'WriteThrottleEvents' | 'ReadThrottleEvents', indexName?: string) =>
      new cloudwatch.Metric({
        namespace: 'AWS/DynamoDB',
        metricName,
        dimensionsMap: indexName === undefined ? { TableName: tableName } : { TableName: tableName, GlobalSecondaryIndexName: indexName },
        statistic: 'Sum',
        period: PERIOD,
      });
    const writeThrottles = new cloudwatch.MathExpression({
      expression: ['table', ...props.indexNames.map((_, index) => `index${index}`)].join(' + '),
      usingMetrics: {
        table: throttles('WriteThrottleEvents'),
        ...Object.fromEntries(props.indexNames.map((name, index) => [`index${index}`, throttles('WriteThrottleEvents', name)])),
      },
      label: 'write throttles (table and indexes)',
      period: PERIOD,
    });
    this.alarm('TableWriteThrottlesAlarm', {
      alarmDescription:
        'Writes to the table or its index were throttled in 2 of the last 3 minutes: beyond twice the previous peak, a hot key, or the table quota',
      metric: writeThrottles,
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    // The table's reads: the emitter's of the records, and every function's of the registry, whose
    // items (a tenant's entry, the public settings) are each read by every instance that sees them.
    const readThrottles = throttles('ReadThrottleEvents');
    this.alarm('TableReadThrottlesAlarm', {
      alarmDescription:
        "Reads of the table were throttled in 2 of the last 3 minutes: a hot item (a registry item read by very many function instances) or the table's read quota",
      metric: readThrottles,
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    return { delayInFlight, accountConcurrency, accountQuota, writeThrottles };
  }

  /** What flows through the scheduler, and what it refuses or fails. */
  private addPathWidgets(props: SchedulerMonitoringProps): void {
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Emit lateness (ms after the due time)',
        width: 12,
        left: (['p50', 'p90', 'p99', 'Maximum'] as const).map((statistic) =>
          schedulerMetric('EmitLatenessMs', 'emitter', statistic, statistic === 'Maximum' ? 'max' : statistic),
        ),
        leftAnnotations: [{ value: this.latenessThreshold, label: 'p99 alarm' }],
      }),
      new cloudwatch.GraphWidget({
        title: 'Throughput (events per minute)',
        width: 12,
        left: [
          schedulerMetric('EventsIngested', 'ingest', 'Sum', 'ingested'),
          schedulerMetric('EventsStored', 'ingest', 'Sum', 'stored'),
          schedulerMetric('EventsDelayed', 'ingest', 'Sum', 'delayed at ingest'),
          schedulerMetric('EventsLoaded', 'loader', 'Sum', 'found by the loader'),
          schedulerMetric('EventsDelayed', 'loading', 'Sum', 'delayed after loading'),
          schedulerMetric('EventsEmitted', 'emitter', 'Sum', 'emitted'),
        ],
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({ title: 'Failures by function and reason', width: 12, left: [byReason('EventsFailed')] }),
      new cloudwatch.GraphWidget({
        title: 'Dead-letter queues (messages)',
        width: 12,
        left: Object.entries(props.deadLetterQueues).map(([name, { queue }]) =>
          queue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum', label: name }),
        ),
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Function errors and throttles',
        width: 12,
        left: SCHEDULER_FUNCTIONS.flatMap((name) => [
          props.functions[name].function.metricErrors({ period: PERIOD, statistic: 'Sum', label: `${name} errors` }),
          props.functions[name].function.metricThrottles({ period: PERIOD, statistic: 'Sum', label: `${name} throttles` }),
        ]),
      }),
      new cloudwatch.GraphWidget({
        title: 'Loader backlog (s) and duplicates suppressed',
        width: 12,
        left: [schedulerMetric('LoaderBacklogSeconds', 'loader', 'Maximum', 'loader backlog')],
        right: (['ingest', 'loading', 'emitter'] as const).map((service) =>
          schedulerMetric('DuplicatesSuppressed', service, 'Sum', `duplicates at ${service}`),
        ),
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Cancels and reschedules (per minute)',
        width: 12,
        left: [
          schedulerMetric('EventsCancelled', 'ingest', 'Sum', 'cancelled'),
          schedulerMetric('EventsRescheduled', 'ingest', 'Sum', 'rescheduled'),
          // Delay-queue messages of a version that was cancelled or moved since it was queued.
          schedulerMetric('StaleMessagesDropped', 'emitter', 'Sum', 'stale deliveries dropped'),
        ],
      }),
      // Quotas (QUOTA_EXCEEDED), foreign targets (TARGET_NOT_ALLOWED), unknown tenants, refused changes...
      new cloudwatch.GraphWidget({ title: 'Refused requests by reason', width: 12, left: [byReason('EventsRejected')] }),
    );
  }

  /** Where requests wait, and what the scheduler repeats or repairs. */
  private addQueueWidgets(props: SchedulerMonitoringProps): void {
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Ingest queues: requests waiting (left) and the oldest one’s age in s (right)',
        width: 24,
        left: Object.entries(props.ingestQueues).map(([name, queue]) =>
          queue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum', label: `${name} waiting` }),
        ),
        right: Object.entries(props.ingestQueues).map(([name, queue]) =>
          queue.metricApproximateAgeOfOldestMessage({ period: PERIOD, statistic: 'Maximum', label: `${name} oldest` }),
        ),
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Repairs and publish retries (per minute)',
        width: 12,
        left: [
          // Stored events still open past their due time, sent again by the loader's sweep.
          schedulerMetric('EventsRepaired', 'loading', 'Sum', 'events repaired'),
          // Publishes put back for a later try (throttling, an outage).
          schedulerMetric('PublishRetries', 'emitter', 'Sum', 'publish retries'),
        ],
      }),
      // Two copies of one event emitted at once, noticed when their ends were recorded.
      new cloudwatch.GraphWidget({
        title: 'Duplicate emissions (per minute)',
        width: 12,
        left: [schedulerMetric('DuplicateEmissions', 'emitter', 'Sum', 'duplicate emissions')],
      }),
    );
  }

  private addCapacityWidgets(props: SchedulerMonitoringProps, capacity: CapacityMetrics): void {
    const { delayInFlight, accountConcurrency, accountQuota, writeThrottles } = capacity;
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Capacity: delay-queue messages in flight (left) and the account’s concurrency (right), against their quotas',
        width: 12,
        left: [delayInFlight.with({ label: 'delay queue in flight' })],
        leftAnnotations: [{ value: SQS_IN_FLIGHT_QUOTA, label: 'SQS in-flight quota' }],
        right: [accountConcurrency.with({ label: 'account concurrency' })],
        rightAnnotations: [{ value: accountQuota, label: 'concurrency quota' }],
      }),
      new cloudwatch.GraphWidget({
        title: 'Capacity: table write units consumed (left) and throttled writes (right)',
        width: 12,
        left: [props.table.metricConsumedWriteCapacityUnits({ period: PERIOD, statistic: 'Sum', label: 'write units a minute' })],
        right: [writeThrottles],
      }),
    );
  }
}
