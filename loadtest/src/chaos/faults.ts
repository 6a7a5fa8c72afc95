import { appendFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { SNSServiceException } from '@aws-sdk/client-sns';
import { SQSServiceException } from '@aws-sdk/client-sqs';
import type { AwsClients } from '@adhoc-scheduler/functions';
import { operationName, type MiddlewareStackLike } from '../cost/usage-meter.js';
import { seededRandom } from './random.js';

/** The AWS services the scheduler's clients call. */
export type AwsService = keyof AwsClients;

const SERVICES: readonly AwsService[] = ['sns', 'sqs', 'dynamodb'];

/**
 * The two transient failures a call can meet. `refused`: the service turned the call down and
 * did nothing (throttling, a 5xx). `lost`: the call took effect but its answer never came back
 * (a timeout, a reset connection), so the caller cannot tell it from a refusal.
 */
export type FaultKind = 'refused' | 'lost';

export interface InjectedFault {
  /** Unique in a run, and named in the error the service sees, so its logs lead back here. */
  readonly id: string;
  /** Epoch ms. */
  readonly at: number;
  readonly service: AwsService;
  /** The API operation, e.g. `PublishBatch`, `ReceiveMessage`, `UpdateItem`. */
  readonly operation: string;
  readonly kind: FaultKind;
  /** Ids found in the request (and, for a lost answer, in the answer): the events the call concerned. */
  readonly ids: readonly string[];
}

/** Whether a call meets a fault, and which. */
export type FaultDecision = (call: { readonly service: AwsService; readonly operation: string }) => FaultKind | undefined;

/** A fault on each call with this probability, either kind as likely. */
export function randomFaults(probability: number, random: () => number): FaultDecision {
  return () => {
    if (random() >= probability) return undefined;
    return random() < 0.5 ? 'refused' : 'lost';
  };
}

export interface FaultInjection {
  readonly decide: FaultDecision;
  /** Put before each fault's number, e.g. the service's life: `f3.`. */
  readonly idPrefix: string;
  /** What is recorded as an id: matched against the request and the answer, as JSON. */
  readonly idPattern: RegExp;
  /** Called before the service sees the fault. */
  readonly onFault: (fault: InjectedFault) => void;
}

const SERVICE_EXCEPTIONS = { sns: SNSServiceException, sqs: SQSServiceException, dynamodb: DynamoDBServiceException } as const;

/** What the SDK raises when a service answers 503 and its own retries are spent. */
function refusal(service: AwsService, operation: string, faultId: string): Error {
  return new SERVICE_EXCEPTIONS[service]({
    name: 'ServiceUnavailable',
    $fault: 'server',
    $metadata: { httpStatusCode: 503, attempts: 1 },
    message: `injected fault ${faultId}: ${operation} refused before it was sent`,
  });
}

/** What the SDK's HTTP handler raises when a request times out. */
function lostAnswer(operation: string, faultId: string): Error {
  return Object.assign(new Error(`injected fault ${faultId}: the answer to ${operation} was lost after the call took effect`), {
    name: 'TimeoutError',
  });
}

function idsIn(value: unknown, pattern: RegExp): string[] {
  const text =
    JSON.stringify(value, (_key, item: unknown) =>
      item instanceof Uint8Array ? undefined : typeof item === 'bigint' ? String(item) : item,
    ) ?? '';
  return [...new Set(text.match(pattern) ?? [])];
}

/**
 * Wraps the service's SNS, SQS and DynamoDB clients (pass it through `instrumentClients`) so
 * that calls fail as `decide` says. It runs before the SDK's own middleware, retries included,
 * so the service's code sees every fault: a refused call is never sent, and a lost answer
 * comes after exactly one request that took effect. A call that fails on its own keeps its
 * own error and is no fault of ours.
 */
export function injectFaults(clients: AwsClients, injection: FaultInjection): void {
  const pattern = new RegExp(injection.idPattern.source, 'g');
  let faults = 0;
  for (const service of SERVICES) {
    const stack: MiddlewareStackLike = clients[service].middlewareStack;
    stack.add(
      (next, context) => async (args) => {
        const operation = operationName(context.commandName);
        const kind = injection.decide({ service, operation });
        if (kind === undefined) return next(args);
        faults += 1;
        const id = `${injection.idPrefix}${faults}`;
        if (kind === 'refused') {
          injection.onFault({ id, at: Date.now(), service, operation, kind, ids: idsIn(args.input, pattern) });
          throw refusal(service, operation, id);
        }
        const result = await next(args);
        injection.onFault({ id, at: Date.now(), service, operation, kind, ids: idsIn([args.input, result.output], pattern) });
        throw lostAnswer(operation, id);
      },
      // Outermost: ahead of the SDK's retries, and of the usage counters (a refused call never reached the service).
      { step: 'initialize', priority: 'high', name: 'loadtestFaultInjection', override: true },
    );
  }
}

/** Faults by service, operation and kind. */
export type FaultCounts = Record<string, Record<string, Record<FaultKind, number>>>;

export function countFaults(faults: readonly InjectedFault[]): FaultCounts {
  const counts: FaultCounts = {};
  for (const { service, operation, kind } of faults) {
    counts[service] ??= {};
    const byOperation = counts[service];
    byOperation[operation] ??= { refused: 0, lost: 0 };
    byOperation[operation][kind] += 1;
  }
  return counts;
}

/**
 * Reads the faults a service recorded, one JSON object a line. A line cut short by a kill -9
 * is skipped and counted.
 */
export async function readFaultLog(file: string): Promise<{ readonly faults: InjectedFault[]; readonly unreadableLines: number }> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw error;
  });
  const faults: InjectedFault[] = [];
  let unreadableLines = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      faults.push(JSON.parse(line) as InjectedFault);
    } catch {
      unreadableLines += 1;
    }
  }
  return { faults, unreadableLines };
}

/** What the harness asks of a service it starts with faults (it crosses the IPC channel: plain data). */
export interface ServiceFaults {
  /** Each call of the service's SNS, SQS and DynamoDB clients fails with this probability. */
  readonly probability: number;
  /** Seeds the decisions; each life of the service draws its own sequence from it. */
  readonly seed: number;
  /** Which start of the service this is, from 1: its faults are numbered `f<life>.<n>`. */
  readonly life: number;
  /** Each fault is appended there as a JSON line before the service sees it, so a kill -9 loses none. */
  readonly logFile: string;
  /** The source of the pattern of ids recorded with each fault. */
  readonly idPattern: string;
}

export function serviceFaultInjection(faults: ServiceFaults): FaultInjection {
  return {
    decide: randomFaults(faults.probability, seededRandom(faults.seed * 1_000 + faults.life)),
    idPrefix: `f${faults.life}.`,
    idPattern: new RegExp(faults.idPattern),
    onFault: (fault) => appendFileSync(faults.logFile, `${JSON.stringify(fault)}\n`),
  };
}
