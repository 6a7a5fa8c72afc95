import { Worker } from 'node:worker_threads';
import { REASON, toIso } from '@adhoc-scheduler/shared';
import { startConsumer } from '../consumer.js';
import type { PlannedEvent } from '../plan.js';
import { pollUntil } from '../poll.js';
import { publishEvents, type PublishStats } from '../publisher.js';
import { harnessClients, type ServiceAccess } from '../service/connection.js';

export const NOISY_TENANT = 'noisy';
/** How long the noisy client waits for more of its notices once none has come (after the quiet tenant's are in). */
const NOTICES_IDLE_MS = 30_000;

/**
 * What the noisy tenant sends, a cycle of 20: what a client looping on changes, or one guessing
 * ids, sends. 8 cancels and 8 reschedules by ids it never scheduled, 2 cancels naming the quiet
 * tenant's real event ids (another tenant's events: refused as not found, never applied), and 2
 * invalid requests (a reschedule to a date that is none, a cancel by a malformed event id), which
 * count in no quota. Each names the noisy tenant's failure topic: every one is refused, with one
 * notice each (taken and counted: EVENT_NOT_FOUND; over maxControlPerSecond: QUOTA_EXCEEDED).
 */
export const NOISY_KINDS = [...tenRequests('invalid-date'), ...tenRequests('invalid-event-id')] as const;

/** Half the cycle: the same nine valid requests, then the invalid one named. */
function tenRequests<Invalid extends string>(invalid: Invalid) {
  return [
    'cancel-unknown',
    'reschedule-unknown',
    'cancel-unknown',
    'reschedule-unknown',
    'cancel-other-tenant',
    'cancel-unknown',
    'reschedule-unknown',
    'cancel-unknown',
    'reschedule-unknown',
    invalid,
  ] as const;
}

export type NoisyKind = (typeof NOISY_KINDS)[number];

export function noisyKind(seq: number): NoisyKind {
  return NOISY_KINDS[seq % NOISY_KINDS.length] as NoisyKind;
}

/** The refusals each kind may get: a valid request is counted (taken, then not found) or over the quota; an invalid one is counted in none. */
export const EXPECTED_REASONS: Readonly<Record<NoisyKind, readonly string[]>> = {
  'cancel-unknown': [REASON.EVENT_NOT_FOUND, REASON.QUOTA_EXCEEDED],
  'reschedule-unknown': [REASON.EVENT_NOT_FOUND, REASON.QUOTA_EXCEEDED],
  'cancel-other-tenant': [REASON.EVENT_NOT_FOUND, REASON.QUOTA_EXCEEDED],
  'invalid-date': [REASON.INVALID_DATE],
  'invalid-event-id': [REASON.INVALID_FIELD],
};

/**
 * One of the noisy tenant's requests. `user` carries the request's own id, quoted back in its
 * notice: the run tells each request's answer apart by it.
 */
export function noisyRequest(event: PlannedEvent, failureTopic: string): string {
  const common = { user: event.clientId, failure_topic: failureTopic };
  switch (noisyKind(event.seq)) {
    case 'cancel-unknown':
      return JSON.stringify({ action: 'cancel', id: event.clientId, ...common });
    case 'reschedule-unknown':
      return JSON.stringify({ action: 'reschedule', id: event.clientId, date: toIso(event.dueAt), ...common });
    case 'cancel-other-tenant':
      return JSON.stringify({ action: 'cancel', event_id: event.eventId, ...common });
    case 'invalid-date':
      return JSON.stringify({ action: 'reschedule', id: event.clientId, date: 'next Tuesday', ...common });
    case 'invalid-event-id':
      return JSON.stringify({ action: 'cancel', event_id: 'not an event id', ...common });
  }
}

/** What a failure notice says: its reason, when the refusal was made, and the request it quotes. */
export interface NoticeSeen {
  readonly reason: string;
  /** Epoch ms (`failedAt`); undefined when the notice has none. */
  readonly failedAt: number | undefined;
  /** The request quoted, when it was a JSON object. */
  readonly request: Readonly<Record<string, unknown>> | undefined;
}

export function noticeOf(body: string): NoticeSeen {
  let notice: { reason?: unknown; failedAt?: unknown; event?: unknown };
  try {
    notice = JSON.parse(body) as typeof notice;
  } catch {
    return { reason: 'not a failure notice', failedAt: undefined, request: undefined };
  }
  const failedAt = typeof notice.failedAt === 'string' ? Date.parse(notice.failedAt) : Number.NaN;
  return {
    reason: typeof notice.reason === 'string' ? notice.reason : 'not a failure notice',
    failedAt: Number.isFinite(failedAt) ? failedAt : undefined,
    request:
      typeof notice.event === 'object' && notice.event !== null && !Array.isArray(notice.event)
        ? (notice.event as Record<string, unknown>)
        : undefined,
  };
}

/** The noisy tenant's notices, each matched to its request by the `user` it quotes. */
export class NoisyAnswers {
  private readonly answers = new Map<string, number>();
  private readonly reasons = new Map<string, number>();
  /** Requests taken (counted in the quota, then refused as not found), by the second they were handled in. */
  private readonly takenBySecond = new Map<number, number>();
  private unexpected: string[] = [];
  private notices = 0;
  private strangers = 0;
  lastAt = 0;

  constructor(private readonly kindOf: ReadonlyMap<string, NoisyKind>) {}

  record(seen: NoticeSeen, receivedAt: number): void {
    const key = seen.request?.user;
    const kind = typeof key === 'string' ? this.kindOf.get(key) : undefined;
    if (typeof key !== 'string' || kind === undefined) {
      this.strangers += 1;
      return;
    }
    this.notices += 1;
    this.lastAt = receivedAt;
    this.answers.set(key, (this.answers.get(key) ?? 0) + 1);
    this.reasons.set(seen.reason, (this.reasons.get(seen.reason) ?? 0) + 1);
    if (!EXPECTED_REASONS[kind].includes(seen.reason) && this.unexpected.length < 10) this.unexpected.push(`${kind}: ${seen.reason}`);
    if (seen.reason === REASON.EVENT_NOT_FOUND && seen.failedAt !== undefined) {
      const second = Math.floor(seen.failedAt / 1000);
      this.takenBySecond.set(second, (this.takenBySecond.get(second) ?? 0) + 1);
    }
  }

  get answered(): number {
    return this.answers.size;
  }

  summary() {
    const answeredTwice = [...this.answers.values()].filter((times) => times > 1).length;
    return {
      requests: this.kindOf.size,
      notices: this.notices,
      answered: this.answers.size,
      unanswered: this.kindOf.size - this.answers.size,
      answeredMoreThanOnce: answeredTwice,
      byReason: Object.fromEntries([...this.reasons].sort((a, b) => b[1] - a[1])),
      takenMostInOneSecond: Math.max(0, ...this.takenBySecond.values()),
      secondsWithTaken: this.takenBySecond.size,
      unexpectedReasons: this.unexpected,
      noticesOfNoRequest: this.strangers,
    };
  }
}

export type NoisyAnswersSummary = ReturnType<NoisyAnswers['summary']>;

/** What the noisy tenant's client needs: plain data, so that it can run in a thread of its own. */
export interface NoisyClientInput {
  readonly access: ServiceAccess;
  /** Its requests, all published at once, as fast as its topic takes them. */
  readonly requests: readonly PlannedEvent[];
  readonly inputTopicArn: string;
  /** The run's failure topic and queue for the noisy tenant: each request names the topic, its notice is received from the queue. */
  readonly failureTopicArn: string;
  readonly failureQueueUrl: string;
  readonly publishConcurrency: number;
  readonly consumers: number;
  /** Epoch ms: the run gives up then. */
  readonly deadline: number;
}

export interface NoisyClientResult {
  readonly publish: PublishStats;
  readonly answers: NoisyAnswersSummary;
  /** When its last notice was received, epoch ms (0: none). */
  readonly lastNoticeAt: number;
}

/**
 * The noisy tenant's client: floods its input topic with its requests and receives their
 * notices, until every request is answered, or none has come for NOTICES_IDLE_MS once
 * `quietFinishedAt` tells when the quiet tenant's measurement ended.
 */
export async function runNoisyClient(input: NoisyClientInput, quietFinishedAt: () => number | undefined): Promise<NoisyClientResult> {
  const clients = harnessClients(input.access);
  const answers = new NoisyAnswers(new Map(input.requests.map((request) => [request.clientId, noisyKind(request.seq)])));
  const consumer = startConsumer(clients.sqs, input.failureQueueUrl, input.consumers, (message, receivedAt) =>
    answers.record(noticeOf(message.Body ?? ''), receivedAt),
  );
  try {
    const publish = await publishEvents(input.requests, {
      sns: clients.sns,
      inputTopicArn: input.inputTopicArn,
      render: (request) => noisyRequest(request, input.failureTopicArn),
      concurrency: input.publishConcurrency,
      onPublished: () => undefined,
      onFailed: () => undefined,
      signal: AbortSignal.timeout(Math.max(0, input.deadline - Date.now())),
    });
    await pollUntil(
      () => {
        const quietEnd = quietFinishedAt();
        return (
          answers.answered >= input.requests.length ||
          (quietEnd !== undefined && Date.now() - Math.max(answers.lastAt, quietEnd) > NOTICES_IDLE_MS)
        );
      },
      input.deadline,
      200,
    );
    return { publish, answers: answers.summary(), lastNoticeAt: answers.lastAt };
  } finally {
    await consumer.stop();
    clients.destroy();
  }
}

/** The noisy client running in its thread: `finish` tells it when the quiet tenant's measurement ended, and waits for its result. */
export interface NoisyClientThread {
  finish(quietFinishedAt: number): Promise<NoisyClientResult>;
  /** Ends the thread: after `finish`, or at once when the run fails before it. */
  stop(): Promise<void>;
}

/**
 * Runs the noisy client in a worker thread, as another machine's client would run: its
 * publishes and the parsing of its 50,000 notices take turns on their own event loop, not on the
 * one that stamps the quiet tenant's deliveries. It still shares the machine's cores.
 */
export function startNoisyClientThread(input: NoisyClientInput): NoisyClientThread {
  const worker = new Worker(new URL('./noisy-client-thread.ts', import.meta.url), {
    workerData: input,
    execArgv: ['--import', import.meta.resolve('tsx')],
  });
  const result = new Promise<NoisyClientResult>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the noisy client's thread ended (exit code ${code}) without its result`)));
  });
  // Awaited by finish; a thread stopped before finish has no result to report.
  result.catch(() => {});
  return {
    finish(quietFinishedAt) {
      worker.postMessage({ quietFinishedAt });
      return result;
    },
    async stop() {
      await worker.terminate();
    },
  };
}
