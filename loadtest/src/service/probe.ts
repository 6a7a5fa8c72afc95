import type { AwsClients, FunctionName } from '@adhoc-scheduler/functions';
import { decodeDelayQueueMessage, EMISSION_ATTRIBUTE } from '@adhoc-scheduler/shared';
import { countUsage, type Invocation, type MiddlewareStackLike, type UsageCounter, type UsageSnapshot } from '../cost/usage-meter.js';

/** One invocation of a function, as the local runtime reported it. */
export interface InvocationRecord {
  readonly fn: FunctionName;
  /** Epoch ms when it returned. */
  readonly endedAt: number;
  readonly durationMs: number;
  readonly records: number;
}

/** A loader tick with what it cost: only the loader reads from the table, so reads between two tick ends are that tick's. */
export interface LoaderTick {
  readonly startedAt: number;
  readonly durationMs: number;
  readonly readUnits: number;
  readonly queries: number;
  /** Loading-queue messages sent (chunks of event ids). */
  readonly chunksSent: number;
}

/** When an event was first sent to the delay queue, when the emitter got it from there and published it (epoch ms), by event id. */
export interface EmissionTrace {
  /** Its first send to the delay queue (by ingest, or by loading for a stored event); undefined when not seen. */
  readonly queuedAt?: number | undefined;
  readonly receivedAt: number;
  readonly publishStartedAt: number | undefined;
  readonly publishEndedAt: number | undefined;
}

export interface ServiceReport {
  readonly usage: UsageSnapshot;
  /** Present when asked for: every invocation (the emitter's included) and each loader tick. */
  readonly invocations?: readonly InvocationRecord[];
  readonly loaderTicks?: readonly LoaderTick[];
  /** Present when asked for: the first emission of each event, by event id. */
  readonly emissions?: Readonly<Record<string, EmissionTrace>>;
}

/** The event a delay-queue message carries; undefined for anything else (a notice, ends, or what the emitter reports as not a message). */
function eventIdOf(body: string | undefined): string | undefined {
  try {
    const decoded = decodeDelayQueueMessage(body ?? '');
    return decoded.kind === 'event' ? decoded.event.id : undefined;
  } catch {
    return undefined;
  }
}

interface MutableTrace {
  receivedAt: number;
  publishStartedAt?: number;
  publishEndedAt?: number;
}

/**
 * Watches a local scheduler from inside its process: the usage middleware on its clients and
 * every invocation it reports. Pass `instrumentClients` and `onInvocation` to startLocalScheduler.
 */
export class ServiceProbe {
  private counter: UsageCounter | undefined;
  private loadingQueueUrl: string | undefined;
  private delayQueueUrl: string | undefined;
  private readonly invocations: InvocationRecord[] = [];
  private readonly loaderTicks: LoaderTick[] = [];
  private readonly emissions = new Map<string, MutableTrace>();
  /** When each event was first sent to the delay queue. */
  private readonly queued = new Map<string, number>();
  private readUnitsAtLastTick = 0;
  private queriesAtLastTick = 0;
  private chunksAtLastTick = 0;

  readonly instrumentClients = (clients: AwsClients): void => {
    this.counter = countUsage(clients);
    this.traceEmissions(clients.sqs.middlewareStack, clients.sns.middlewareStack);
  };

  /**
   * Stamps, per event, when the emitter received it from the delay queue and when its publish
   * to the target started and returned: where an event's lateness arose, in the emitter or on
   * the way to the consumer.
   */
  private traceEmissions(sqs: MiddlewareStackLike, sns: MiddlewareStackLike): void {
    const options = { step: 'initialize', name: 'loadtestEmissionTrace', override: true } as const;
    sqs.add(
      (next, context) => async (args) => {
        const input = args.input as { QueueUrl?: string; MessageBody?: string; Entries?: { MessageBody?: string }[] };
        const sending = input.QueueUrl !== undefined && input.QueueUrl === this.delayQueueUrl;
        const result = await next(args);
        if (sending && (context.commandName === 'SendMessageBatchCommand' || context.commandName === 'SendMessageCommand')) {
          // Stamped once the send returned: the message is on the queue by then.
          const queuedAt = Date.now();
          const bodies =
            context.commandName === 'SendMessageCommand' ? [input.MessageBody] : (input.Entries ?? []).map((e) => e.MessageBody);
          for (const body of bodies) {
            const id = eventIdOf(body);
            if (id !== undefined && !this.queued.has(id)) this.queued.set(id, queuedAt);
          }
          return result;
        }
        const queueUrl = (args.input as { QueueUrl?: string }).QueueUrl;
        if (context.commandName !== 'ReceiveMessageCommand' || queueUrl === undefined || queueUrl !== this.delayQueueUrl) return result;
        const receivedAt = Date.now();
        for (const message of (result.output as { Messages?: { Body?: string }[] }).Messages ?? []) {
          const id = eventIdOf(message.Body);
          if (id !== undefined && !this.emissions.has(id)) this.emissions.set(id, { receivedAt });
        }
        return result;
      },
      options,
    );
    sns.add(
      (next, context) => async (args) => {
        // The emitter publishes alone, or in PublishBatch requests when several are due at once.
        type Attributes = Record<string, { StringValue?: string }> | undefined;
        const input = args.input as { MessageAttributes?: Attributes; PublishBatchRequestEntries?: { MessageAttributes?: Attributes }[] };
        const entries =
          context.commandName === 'PublishCommand'
            ? [input]
            : context.commandName === 'PublishBatchCommand'
              ? (input.PublishBatchRequestEntries ?? [])
              : [];
        const firsts = entries
          .map((entry) => this.emissions.get(entry.MessageAttributes?.[EMISSION_ATTRIBUTE.eventId]?.StringValue ?? ''))
          .filter((trace): trace is MutableTrace => trace !== undefined && trace.publishStartedAt === undefined);
        const startedAt = Date.now();
        for (const trace of firsts) trace.publishStartedAt = startedAt;
        const result = await next(args);
        const endedAt = Date.now();
        for (const trace of firsts) trace.publishEndedAt = endedAt;
        return result;
      },
      options,
    );
  }

  readonly onInvocation = (invocation: Invocation): void => {
    const counter = this.requireCounter();
    counter.recordInvocation(invocation);
    const endedAt = Date.now();
    this.invocations.push({ ...invocation, endedAt });
    if (invocation.fn !== 'loader') return;
    const usage = counter.snapshot();
    const readUnits = usage.dynamodb.readUnits;
    const queries = usage.dynamodb.byOperation.Query?.requests ?? 0;
    const chunks = this.loadingQueueUrl ? (usage.sqs.sentByQueue[this.loadingQueueUrl] ?? 0) : 0;
    this.loaderTicks.push({
      startedAt: endedAt - invocation.durationMs,
      durationMs: invocation.durationMs,
      readUnits: readUnits - this.readUnitsAtLastTick,
      queries: queries - this.queriesAtLastTick,
      chunksSent: chunks - this.chunksAtLastTick,
    });
    this.readUnitsAtLastTick = readUnits;
    this.queriesAtLastTick = queries;
    this.chunksAtLastTick = chunks;
  };

  /** The queues' URLs are known once the scheduler has started (nothing is queued before). */
  watchQueues(queues: { readonly loadingQueueUrl: string; readonly delayQueueUrl: string }): void {
    this.loadingQueueUrl = queues.loadingQueueUrl;
    this.delayQueueUrl = queues.delayQueueUrl;
    this.chunksAtLastTick = this.requireCounter().snapshot().sqs.sentByQueue[queues.loadingQueueUrl] ?? 0;
  }

  report(withTimeline: boolean): ServiceReport {
    const usage = this.requireCounter().snapshot();
    if (!withTimeline) return { usage };
    const emissions: Record<string, EmissionTrace> = {};
    for (const [id, trace] of this.emissions) {
      emissions[id] = {
        queuedAt: this.queued.get(id),
        receivedAt: trace.receivedAt,
        publishStartedAt: trace.publishStartedAt,
        publishEndedAt: trace.publishEndedAt,
      };
    }
    return { usage, invocations: [...this.invocations], loaderTicks: [...this.loaderTicks], emissions };
  }

  private requireCounter(): UsageCounter {
    if (!this.counter) throw new Error('the probe was not given the scheduler clients (instrumentClients)');
    return this.counter;
  }
}
