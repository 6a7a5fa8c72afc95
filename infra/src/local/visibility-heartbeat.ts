import { ChangeMessageVisibilityBatchCommand, type ChangeMessageVisibilityCommandInput, type SQSClient } from '@aws-sdk/client-sqs';
import { SQS_BATCH_ENTRIES, type Logger } from '@adhoc-scheduler/shared';

/**
 * Sets the visibility of up to ten received messages to `seconds` from now, in one call; for each,
 * whether SQS took it (one it did not no longer holds its receipt: it is, or will be, visible
 * again). Throws when the call itself fails.
 */
export async function changeVisibilities(
  sqs: SQSClient,
  queueUrl: string,
  receiptHandles: readonly (string | undefined)[],
  seconds: number,
): Promise<boolean[]> {
  const { Failed = [] } = await sqs.send(
    new ChangeMessageVisibilityBatchCommand({
      QueueUrl: queueUrl,
      Entries: receiptHandles.map((receiptHandle, index) => ({
        Id: `m${index}`,
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: seconds,
      })),
    }),
  );
  const failed = new Set(Failed.map((failure) => failure.Id));
  return receiptHandles.map((_, index) => !failed.has(`m${index}`));
}

/**
 * Keeps the messages a local poller has handed to a handler hidden while the handler works on
 * them, as long as it does: the local queues' visibility timeout is short
 * (LOCAL_VISIBILITY_TIMEOUT_SECONDS), so that what a killed service held comes back soon after
 * the kill, and a message worked longer than that is extended before its timeout runs out
 * (bbc/sqs-consumer's heartbeat). Only a message with less than half the timeout left is
 * extended, back to the whole timeout: one held for less than half of it (an emitter batch
 * held until its due second, an ingest batch) costs no call.
 *
 * A message whose visibility the handler changes itself (the emitter's retryLater: a failed
 * publish put off by its back-off, ends handed over put off to `endsRetryMaxSeconds` before they
 * are written) is the handler's from then on: it is not extended again, answered or not, so the
 * put-off stands. The heartbeat sees such a change on the SQS client it shares with the handler.
 */

export interface VisibilityHeartbeatOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  /** The queue's visibility timeout; each extension sets it again from now. */
  readonly timeoutSeconds: number;
  readonly logger: Logger;
  /** Longest a message is kept hidden for a handler; after that the handler is taken for hung, as Lambda ends an invocation at its timeout. */
  readonly maxHoldSeconds?: number | undefined;
  /** Epoch ms; Date.now by default. */
  readonly now?: () => number;
}

/** Lambda's longest function timeout: no handler holds a message longer there. */
export const DEFAULT_MAX_HOLD_SECONDS = 900;

interface Held {
  readonly receiptHandle: string;
  readonly heldSince: number;
  /** Until when SQS keeps it hidden, as far as this poller knows (epoch ms, conservative). */
  visibleUntil: number;
  /** The handler changed its visibility itself: left alone. */
  putOff: boolean;
}

/** How often the heartbeat looks at what it holds, as a fraction of the timeout: a failed extension is tried again a few times before the message would show. */
const BEAT_FRACTION = 10;

/** Extension calls a beat makes at once. */
const EXTENSIONS_IN_FLIGHT = 8;

/** Each heartbeat's middleware is named apart: the pollers of one service share its SQS client. */
let heartbeats = 0;

export class VisibilityHeartbeat {
  private readonly held = new Map<string, Held>();
  private readonly timeoutMs: number;
  private readonly maxHoldMs: number;
  private readonly now: () => number;
  private readonly middlewareName: string;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;

  constructor(private readonly options: VisibilityHeartbeatOptions) {
    this.timeoutMs = options.timeoutSeconds * 1000;
    this.maxHoldMs = (options.maxHoldSeconds ?? DEFAULT_MAX_HOLD_SECONDS) * 1000;
    this.now = options.now ?? Date.now;
    heartbeats += 1;
    this.middlewareName = `localVisibilityHeartbeat${heartbeats}`;
    // A handler's own ChangeMessageVisibility on a held message: its put-off stands.
    options.sqs.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'ChangeMessageVisibilityCommand') {
          const input = args.input as Partial<ChangeMessageVisibilityCommandInput>;
          const entry =
            input.QueueUrl === options.queueUrl && input.ReceiptHandle !== undefined ? this.held.get(input.ReceiptHandle) : undefined;
          if (entry) entry.putOff = true;
        }
        return next(args);
      },
      { step: 'initialize', priority: 'high', name: this.middlewareName },
    );
  }

  /** Starts beating every tenth of the timeout (at least every 100 ms). */
  start(): this {
    this.timer ??= setInterval(() => void this.beat(), Math.max(100, this.timeoutMs / BEAT_FRACTION));
    return this;
  }

  /** Messages handed to the handler, each hidden until `visibleUntil` (epoch ms) as far as the caller knows. */
  hold(messages: readonly { readonly receiptHandle: string; readonly visibleUntil: number }[]): void {
    const heldSince = this.now();
    for (const { receiptHandle, visibleUntil } of messages)
      this.held.set(receiptHandle, { receiptHandle, heldSince, visibleUntil, putOff: false });
  }

  /** The handler is done with them: deleted, or left to come back. */
  release(receiptHandles: readonly string[]): void {
    for (const receiptHandle of receiptHandles) this.held.delete(receiptHandle);
  }

  /** The messages the next beat extends, nearest to showing first: held, not put off, not held past the longest hold, with less than half the timeout left and not yet visible. */
  due(now = this.now()): string[] {
    return [...this.held.values()]
      .filter(
        (entry) =>
          !entry.putOff &&
          now - entry.heldSince < this.maxHoldMs &&
          entry.visibleUntil > now &&
          entry.visibleUntil - now < this.timeoutMs / 2,
      )
      .sort((a, b) => a.visibleUntil - b.visibleUntil)
      .map((entry) => entry.receiptHandle);
  }

  /** Extends what is due, ten to a call and several calls at once; one beat at a time. */
  beat(): Promise<void> {
    this.beating ??= this.extendDue().finally(() => {
      this.beating = undefined;
    });
    return this.beating;
  }

  private async extendDue(): Promise<void> {
    // The nearest to showing first, several calls at once: a spike's thousands of held messages
    // are extended within the beat, not one call after another while the last ones run out.
    const chunks: string[][] = [];
    const due = this.due();
    for (let from = 0; from < due.length; from += SQS_BATCH_ENTRIES) chunks.push(due.slice(from, from + SQS_BATCH_ENTRIES));
    const worker = async (): Promise<void> => {
      for (let chunk = chunks.shift(); chunk !== undefined; chunk = chunks.shift()) await this.extend(chunk);
    };
    await Promise.all(Array.from({ length: Math.min(EXTENSIONS_IN_FLIGHT, chunks.length) }, worker));
  }

  private async extend(chunk: readonly string[]): Promise<void> {
    const { sqs, queueUrl, timeoutSeconds, logger } = this.options;
    const requestedAt = this.now();
    try {
      const taken = await changeVisibilities(sqs, queueUrl, chunk, timeoutSeconds);
      chunk.forEach((receiptHandle, index) => {
        const entry = this.held.get(receiptHandle);
        // Released meanwhile, or put off by the handler while this call was on its way: not ours to track.
        if (!entry || entry.putOff) return;
        if (!taken[index]) {
          this.held.delete(receiptHandle);
          logger.warn({ queueUrl }, 'could not keep a message hidden while its handler works on it; SQS may deliver it again');
        } else entry.visibleUntil = requestedAt + this.timeoutMs;
      });
    } catch (error) {
      // Tried again at the next beat, well before the timeout runs out.
      logger.warn({ err: error, queueUrl, messages: chunk.length }, 'could not extend the visibility of messages being handled');
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.beating;
    this.options.sqs.middlewareStack.remove(this.middlewareName);
  }
}
