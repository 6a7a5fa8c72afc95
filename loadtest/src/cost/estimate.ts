import type { FunctionName } from '@adhoc-scheduler/functions';
import { FUNCTION_MEMORY_MB } from '@adhoc-scheduler/infra';
import { PRICES } from './prices.js';
import type { UsageSnapshot } from './usage-meter.js';

/** Memory of each function as the CDK app sets it; Lambda bills duration by it. */
export const LAMBDA_MEMORY_MB: Readonly<Record<FunctionName, number>> = FUNCTION_MEMORY_MB;

export interface CostLine {
  readonly item: string;
  /** How much was used during the run, in the line's unit. */
  readonly quantity: number;
  readonly unit: string;
  readonly dollars: number;
  readonly perMillionEvents: number;
}

export interface CostEstimate {
  readonly events: number;
  /** What each event cost the service: SNS to the target, SQS, DynamoDB, Lambda. */
  readonly lines: readonly CostLine[];
  readonly perMillionEvents: number;
  /** The client's publish to the input topic, one Publish per event: listed, not included above. */
  readonly clientInputPublishPerMillion: number;
  /** Receives that found nothing: what idle pollers cost over the run's duration, not per event (not included). */
  readonly idleReceives: { readonly requests: number; readonly dollars: number };
  /** EventBridge Scheduler for the same events, with the SNS publish to the target. */
  readonly eventBridgeSchedulerPerMillion: number;
  readonly memoryMb: Readonly<Record<FunctionName, number>>;
  readonly pricesAsOf: string;
}

/** Subtracts two usage snapshots field by field (the run's usage: after minus before). */
export function usageBetween<T>(after: T, before: T): T {
  if (typeof after === 'number') return (after - ((before as number | undefined) ?? 0)) as T;
  if (typeof after !== 'object' || after === null) return after;
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(after)) {
    result[key] = usageBetween(value, (before as Record<string, unknown> | undefined)?.[key]);
  }
  return result as T;
}

const perMillion = (price: number, quantity: number): number => (price * quantity) / 1e6;

/** Prices a run's usage at list prices and divides by the events it delivered. */
export function estimateCost(
  usage: UsageSnapshot,
  events: number,
  memoryMb: Readonly<Record<FunctionName, number>> = LAMBDA_MEMORY_MB,
): CostEstimate {
  const lines: Omit<CostLine, 'perMillionEvents'>[] = [];
  lines.push({
    item: 'SNS publish (to target and failure topics)',
    quantity: usage.sns.billedRequests,
    unit: 'requests',
    dollars: perMillion(PRICES.sns.perMillionRequests, usage.sns.billedRequests),
  });
  for (const [operation, counts] of Object.entries(usage.sqs.byOperation).sort()) {
    const billed = operation === 'ReceiveMessage' ? counts.billedRequests - usage.sqs.emptyReceives : counts.billedRequests;
    lines.push({
      item: `SQS ${operation}${operation === 'ReceiveMessage' ? ' (with messages)' : ''}`,
      quantity: billed,
      unit: 'requests',
      dollars: perMillion(PRICES.sqs.perMillionRequests, billed),
    });
  }
  lines.push({
    item: 'DynamoDB writes',
    quantity: usage.dynamodb.writeUnits,
    unit: 'write request units',
    dollars: perMillion(PRICES.dynamodb.perMillionWriteUnits, usage.dynamodb.writeUnits),
  });
  lines.push({
    item: 'DynamoDB reads',
    quantity: usage.dynamodb.readUnits,
    unit: 'read request units',
    dollars: perMillion(PRICES.dynamodb.perMillionReadUnits, usage.dynamodb.readUnits),
  });
  for (const [fn, counts] of Object.entries(usage.lambda) as [FunctionName, UsageSnapshot['lambda'][FunctionName]][]) {
    if (counts.invocations === 0) continue;
    lines.push({
      item: `Lambda ${fn} requests`,
      quantity: counts.invocations,
      unit: 'invocations',
      dollars: perMillion(PRICES.lambda.perMillionRequests, counts.invocations),
    });
    const gbSeconds = (counts.billedDurationMs / 1000) * (memoryMb[fn] / 1024);
    lines.push({
      item: `Lambda ${fn} duration (${memoryMb[fn]} MB)`,
      quantity: gbSeconds,
      unit: 'GB-seconds',
      dollars: gbSeconds * PRICES.lambda.perGbSecondArm64,
    });
  }
  const perEvent = (dollars: number): number => (events > 0 ? (dollars / events) * 1e6 : Number.NaN);
  const priced = lines.map((line) => ({ ...line, perMillionEvents: perEvent(line.dollars) }));
  const total = priced.reduce((sum, line) => sum + line.dollars, 0);
  return {
    events,
    lines: priced,
    perMillionEvents: perEvent(total),
    clientInputPublishPerMillion: PRICES.sns.perMillionRequests,
    idleReceives: { requests: usage.sqs.emptyReceives, dollars: perMillion(PRICES.sqs.perMillionRequests, usage.sqs.emptyReceives) },
    eventBridgeSchedulerPerMillion: PRICES.eventBridgeScheduler.perMillionInvocations + PRICES.sns.perMillionRequests,
    memoryMb,
    pricesAsOf: PRICES.asOf,
  };
}
