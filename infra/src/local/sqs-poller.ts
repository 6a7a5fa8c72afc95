import { SQS_BATCH_ENTRIES, SQS_MAX_WAIT_SECONDS } from '@adhoc-scheduler/shared';
import {
  heartbeatFor,
  invokeAndDelete,
  RECEIVE_RETRY_MS,
  type Received,
  receiveMessages,
  type SqsPoller,
  type SqsPollerOptions,
} from './sqs-event-source.js';

/** Receives made at once to fill a batch of more than 10 messages. */
const RECEIVES_IN_FLIGHT = 5;

/**
 * Drives a handler the way Lambda's SQS event source does: long-polls batches, invokes the
 * handler, deletes what succeeded and leaves the reported failures (or the whole batch, if
 * the handler throws) to come back after the visibility timeout. Up to `concurrency` batches are
 * handled at once, but gathered one at a time: loops long-polling side by side would split each
 * arrival between them (fauxqs answers every waiting poll when a message arrives), into smaller
 * batches, more invocations and more empty receives. Unlike Lambda, whose queues'
 * visibility timeout exceeds the function's timeout, it keeps the messages of a batch hidden
 * only a short timeout at a time, extended while the handler works (VisibilityHeartbeat): a
 * killed service's messages come back that soon.
 */
export function startSqsPoller(options: SqsPollerOptions): SqsPoller {
  const abort = new AbortController();
  const { queueUrl, logger } = options;
  const heartbeat = heartbeatFor(options);

  const receive = (count: number, waitSeconds: number) => receiveMessages(options, { count, waitSeconds, signal: abort.signal });

  /** The batch being gathered, if any: the next loop gathers once it is done. */
  let gathering: Promise<unknown> = Promise.resolve();

  const pollOnce = async (): Promise<void> => {
    const batch = gathering.then(gather);
    gathering = batch.catch(() => undefined);
    const messages = await batch;
    if (messages.length > 0) await invokeAndDelete({ ...options, heartbeat }, messages);
  };

  const gather = async (): Promise<Received[]> => {
    const messages = await receive(options.batchSize, SQS_MAX_WAIT_SECONDS);
    if (messages.length === 0) return messages;
    // Lambda's batching window: keep receiving until the batch is full or the window is over;
    // several receives at once while the queue hands out full ones (a backlog), one otherwise.
    const windowEnds = performance.now() + (options.batchingWindowSeconds ?? 0) * 1000;
    let backlog = messages.length === SQS_BATCH_ENTRIES;
    while (messages.length < options.batchSize && performance.now() < windowEnds) {
      const missing = options.batchSize - messages.length;
      const inFlight = backlog ? Math.min(RECEIVES_IN_FLIGHT, Math.ceil(missing / SQS_BATCH_ENTRIES)) : 1;
      const receives = Array.from({ length: inFlight }, (_, index) =>
        receive(Math.min(SQS_BATCH_ENTRIES, missing - index * SQS_BATCH_ENTRIES), 1),
      );
      const received = await Promise.all(receives);
      backlog = received.every((batch) => batch.length === SQS_BATCH_ENTRIES);
      for (const batch of received) messages.push(...batch);
    }
    return messages;
  };

  const loop = async (): Promise<void> => {
    while (!abort.signal.aborted) {
      try {
        await pollOnce();
      } catch (error) {
        if (abort.signal.aborted) return;
        logger.error({ err: error, queueUrl }, 'poll failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, RECEIVE_RETRY_MS));
      }
    }
  };
  const loops = Array.from({ length: options.concurrency }, loop);

  return {
    async stop() {
      abort.abort();
      await Promise.allSettled(loops);
      await heartbeat.stop();
    },
  };
}
