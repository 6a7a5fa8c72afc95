import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SNSClient } from '@aws-sdk/client-sns';
import { describe, expect, it } from 'vitest';
import { SnsTopicPublisher } from '../src/adapters/sns-publisher.js';
import { emitBatch } from '../src/app/emitter.js';
import { ingestBatch } from '../src/app/ingest.js';
import { takeSeries } from '../src/app/series.js';
import { type BulkCancelJob, bulkCancelDoneNotice } from '../src/domain/bulk-cancel.js';
import type { ScheduledEvent } from '../src/domain/event.js';
import type { FailureNotice } from '../src/domain/failure.js';
import { REASON, type ReasonCode } from '../src/domain/reasons.js';
import { delayed, DUE, event, queued, setup as emitterSetup } from './emitter-kit.js';
import { bulkCancelJob, REGION, registry, scheduleRequest, sqsRecord, topicArn } from './factories.js';
import { ACME_TOPIC, acmeTarget, NOW, published, setup as ingestSetup } from './ingest-kit.js';

/**
 * Every reason code's notice, made by the code that makes it in service, checked against the
 * reason table of docs/clients.md: one shape for all, the message in words, the request quoted
 * as its client wrote it, and every detail documented.
 */

const CLIENTS_PAGE = join(import.meta.dirname, '../../docs/clients.md');

/** The reason table's rows, by code. */
function reasonRows(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of readFileSync(CLIENTS_PAGE, 'utf8').split('\n')) {
    const match = /^\| `([A-Z_]+)` \| (.*) \|$/.exec(line);
    if (match) rows.set(String(match[1]), String(match[2]));
  }
  return rows;
}

/** The fields of a request as clients write them (schedule, cancel, reschedule, cancel by label, pause, resume). */
const REQUEST_FIELDS = new Set([
  'action',
  'id',
  'event_id',
  'date',
  'target',
  'user',
  'payload',
  'failure_topic',
  'labels',
  'label',
  'due_before',
  'note',
  'schedule',
  'timezone',
  'start',
  'end',
  'count',
  'offset',
  'dst',
  'catch_up_seconds',
]);

const failureTopic = topicArn('failures', REGION, '111111111111');
const acmeTenants = { tenants: [{ id: 'acme', accounts: ['111111111111'], maxOpenEvents: 1 }] };

/** The notice ingest makes of `messages`, published in turn on acme's topic: the last one logged. */
async function refusedAtIngest(messages: readonly unknown[], options: { tenants?: typeof acmeTenants } = {}) {
  const context = ingestSetup();
  const deps = options.tenants === undefined ? context.deps : { ...context.deps, tenants: registry(options.tenants) };
  for (const message of messages) await ingestBatch(deps, [published(message)]);
  const notices = context.logger.lines.flatMap(({ fields }) => ('notice' in fields ? [fields.notice as FailureNotice] : []));
  return { notice: notices.at(-1), request: messages.at(-1) };
}

const soon = new Date(NOW + 60_000).toISOString();
/** A valid series request: every minute. */
const everyMinute = (overrides: Record<string, unknown> = {}) => {
  const { date: _date, ...request } = valid({ schedule: 'rate(1 minute)', ...overrides });
  return request;
};

/** The OCCURRENCE_SKIPPED notice of a series taken again two hours after its catch-up window of an hour closed on it. */
async function skippedAfterOutage(): Promise<Made> {
  const context = ingestSetup();
  const request = everyMinute({ timezone: 'UTC', catch_up_seconds: 3600 });
  await ingestBatch(context.deps, [published(request)]);
  const [series] = [...context.series.records.values()];
  if (series === undefined) throw new Error('no series stored');
  await takeSeries(context.deps, series, NOW + 3 * 3_600_000);
  const notice = context.logger.lines.flatMap(({ fields }) => ('notice' in fields ? [fields.notice as FailureNotice] : [])).at(-1);
  const { payload: _payload, catch_up_seconds: _catchUp, ...quoted } = request;
  return { notice, request: quoted };
}
const far = new Date(NOW + 3_600_000).toISOString();
const valid = (overrides: Record<string, unknown> = {}) =>
  scheduleRequest({ date: far, target: acmeTarget, failure_topic: failureTopic, ...overrides });

/** The notice the emitter makes when SNS refuses the publish to the target with `error`; the event as it was due. */
async function failedAtEmission(error: Error | undefined, overrides: Partial<ScheduledEvent> = {}) {
  const context = emitterSetup();
  const failing = event(overrides);
  context.store.put(queued(failing));
  const client = {
    send: async (command: { input: { TopicArn?: string } }) => {
      if (error !== undefined && command.input.TopicArn === failing.target) throw error;
      return { MessageId: 'sent', Successful: [], Failed: [] };
    },
  } as unknown as SNSClient;
  await emitBatch({ ...context.deps, publisher: new SnsTopicPublisher(client) }, [sqsRecord(delayed(failing))]);
  const notice = context.logger.lines.flatMap(({ fields }) => ('notice' in fields ? [fields.notice as FailureNotice] : []))[0];
  return {
    notice,
    request: {
      date: new Date(DUE).toISOString(),
      target: failing.target,
      user: failing.user,
      payload: failing.payload,
      failure_topic: failing.failureTopic,
    },
  };
}

const snsError = (name: string, message: string) => Object.assign(new Error(message), { name, $metadata: {} });

type Made = { readonly notice: FailureNotice | undefined; readonly request: unknown };

/** How each code's notice is made; `undefined`: the code sends none (the table says logs only, or no longer sent). */
const NOTICES: Record<ReasonCode, (() => Promise<Made>) | undefined> = {
  INVALID_JSON: () => refusedAtIngest(['{"date": ']),
  NOT_AN_OBJECT: () => refusedAtIngest([[1, 2]]),
  TOO_DEEPLY_NESTED: () => refusedAtIngest([`${'['.repeat(70)}${']'.repeat(70)}`]),
  MISSING_FIELD: () => refusedAtIngest([valid({ user: undefined })]),
  INVALID_FIELD: () => refusedAtIngest([valid({ user: 7 })]),
  INVALID_DATE: () => refusedAtIngest([valid({ date: 'next tuesday' })]),
  INVALID_TARGET: () => refusedAtIngest([valid({ target: 'not-a-topic' })]),
  INVALID_FAILURE_TOPIC: () => refusedAtIngest([valid({ failure_topic: 'not-a-topic' })]),
  PAYLOAD_TOO_LARGE: () => refusedAtIngest([valid({ payload: 'x'.repeat(262_144) })]),
  TARGET_NOT_FOUND: () => failedAtEmission(snsError('NotFoundException', 'Topic does not exist')),
  TARGET_ACCESS_DENIED: () => failedAtEmission(snsError('AuthorizationErrorException', 'not authorized')),
  PUBLISH_FAILED: () => failedAtEmission(snsError('InvalidParameterException', 'Invalid parameter: Message')),
  UNKNOWN_TENANT: () => failedAtEmission(undefined, { tenant: 'gone' }),
  FOREIGN_INPUT_TOPIC: undefined,
  TENANT_DISABLED: undefined,
  TARGET_NOT_ALLOWED: () => refusedAtIngest([valid({ target: topicArn('out', REGION, '999999999999') })]),
  FAILURE_TOPIC_NOT_ALLOWED: () => refusedAtIngest([valid({ failure_topic: topicArn('failures', REGION, '999999999999') })]),
  QUOTA_EXCEEDED: () => refusedAtIngest([valid({ id: 'one' }), valid({ id: 'two' })], { tenants: acmeTenants }),
  EVENT_NOT_FOUND: () => refusedAtIngest([{ action: 'cancel', id: 'never-scheduled', failure_topic: failureTopic }]),
  EVENT_ALREADY_ENDED: () =>
    refusedAtIngest([
      valid({ id: 'ends' }),
      { action: 'cancel', id: 'ends' },
      { action: 'cancel', id: 'ends', failure_topic: failureTopic },
    ]),
  EVENT_EMITTING: () =>
    refusedAtIngest([
      valid({ id: 'due', date: new Date(NOW + 2_000).toISOString() }),
      { action: 'reschedule', id: 'due', date: soon, failure_topic: failureTopic },
    ]),
  EVENT_QUEUED: undefined,
  TARGET_IN_OTHER_REGION: () => refusedAtIngest([valid({ target: topicArn('out', 'us-west-2', '111111111111') })]),
  FAILURE_TOPIC_IN_OTHER_REGION: () => refusedAtIngest([valid({ failure_topic: topicArn('failures', 'us-west-2', '111111111111') })]),
  CONTROL_NOT_ALLOWED: async () => {
    const context = ingestSetup();
    const request = { action: 'cancel', id: 'order-1', failure_topic: failureTopic };
    await ingestBatch(context.deps, [published(request, undefined, `arn:aws:sns:${REGION}:000000000000:scheduler-input`)]);
    const notice = context.logger.lines.flatMap(({ fields }) => ('notice' in fields ? [fields.notice as FailureNotice] : []))[0];
    return { notice, request };
  },
  TARGET_IS_SCHEDULER_TOPIC: () => refusedAtIngest([valid({ target: ACME_TOPIC })]),
  FAILURE_TOPIC_IS_SCHEDULER_TOPIC: () => refusedAtIngest([valid({ failure_topic: ACME_TOPIC })]),
  INVALID_UNICODE: () => refusedAtIngest([valid({ payload: 'half \ud800' })]),
  PAYLOAD_NOT_PUBLISHABLE: () => failedAtEmission(new URIError('URI malformed')),
  CONTROL_CHARACTER: () => refusedAtIngest([valid({ user: 'bell\u0007' })]),
  RECORD_EXPIRED: undefined,
  DATE_TOO_FAR: () => refusedAtIngest([valid({ date: new Date(NOW + 2 * 365 * 24 * 3600 * 1000).toISOString() })]),
  IDEMPOTENCY_KEY_REUSED: () => refusedAtIngest([valid({ id: 'same', labels: ['a'] }), valid({ id: 'same', labels: ['b'] })]),
  BULK_CANCEL_DONE: async () => {
    const job: BulkCancelJob = {
      ...bulkCancelJob(NOW, { failureTopic, dueBefore: NOW + 60_000 }),
      state: 'done',
      cursor: 'end',
      movedBy: undefined,
      counts: { cancelled: 3, refused: { ended: 1, emitting: 0 } },
      doneAt: NOW,
    };
    const notice = bulkCancelDoneNotice(job, NOW);
    return {
      notice,
      request: { action: 'cancel', label: job.label, due_before: new Date(NOW + 60_000).toISOString(), failure_topic: failureTopic },
    };
  },
  INVALID_SCHEDULE_EXPRESSION: () => refusedAtIngest([everyMinute({ schedule: 'cron(0 9 * * * *)' })]),
  UNKNOWN_TIMEZONE: () => refusedAtIngest([everyMinute({ timezone: 'Mars/Olympus' })]),
  END_BEFORE_START: () => refusedAtIngest([everyMinute({ start: far, end: soon })]),
  INVALID_COUNT: () => refusedAtIngest([everyMinute({ count: 0 })]),
  INVALID_OFFSET: () => refusedAtIngest([everyMinute({ offset: 60_000 })]),
  INVALID_DST_RULE: () => refusedAtIngest([everyMinute({ dst: { gap: 'leap' } })]),
  SCHEDULE_NEVER_FIRES: () => refusedAtIngest([everyMinute({ schedule: 'cron(0 0 31 2 ? *)' })]),
  OCCURRENCE_SKIPPED: skippedAfterOutage,
  SERIES_CHANGE_NOT_SUPPORTED: () =>
    refusedAtIngest([everyMinute({ id: 'daily' }), { action: 'reschedule', id: 'daily', date: far, failure_topic: failureTopic }]),
  PAUSED_BY_OPERATOR: async () => {
    const context = ingestSetup();
    await context.deps.pauses.pause('acme', { owner: 'operator', name: 'operator jo' }, { pausedAt: NOW - 60_000, note: 'flood' });
    const request = { action: 'resume', failure_topic: failureTopic };
    await ingestBatch(context.deps, [published(request)]);
    const notice = context.logger.lines.flatMap(({ fields }) => ('notice' in fields ? [fields.notice as FailureNotice] : []))[0];
    return { notice, request };
  },
};

describe('every failure notice, against the reason table of docs/clients.md', () => {
  const rows = reasonRows();

  it.each(Object.entries(NOTICES))('%s', async (code, make) => {
    const row = rows.get(code);
    expect(row, `a row for ${code}`).toBeDefined();
    if (make === undefined) {
      expect(row, 'a code that sends no notice says so').toMatch(/logs only|no longer sent/);
      return;
    }
    const { notice, request } = await make();
    if (notice === undefined) throw new Error(`no notice made for ${code}`);
    // One shape.
    expect(notice.reason).toBe(code);
    expect(
      Object.keys(notice).filter((key) => !['reason', 'message', 'eventId', 'event', 'failedAt', 'details', 'truncated'].includes(key)),
    ).toEqual([]);
    expect(new Date(notice.failedAt).toISOString()).toBe(notice.failedAt);
    // The message says it in words, never only its code.
    expect(notice.message.length).toBeGreaterThan(10);
    expect(notice.message).not.toContain(code);
    // Details, always an object, each documented in the row.
    expect(notice.details).toBeTypeOf('object');
    for (const key of Object.keys(notice.details))
      expect(row, `${code}'s row documents details.${key}`).toMatch(new RegExp(`\`(details\\.)?${key}[\`.]`));
    // The request as the client wrote it (the text itself when it is no JSON object); a big payload may be cut.
    if (notice.truncated !== undefined) return;
    if (typeof request === 'object' && request !== null && !Array.isArray(request))
      expect(Object.keys(notice.event as object).filter((field) => !REQUEST_FIELDS.has(field))).toEqual([]);
    expect(notice.event).toEqual(code === 'INVALID_UNICODE' ? { ...(request as object), payload: 'half \ufffd' } : request);
  });

  it('covers every code of the reasons module', () => {
    expect(Object.keys(NOTICES).sort()).toEqual(Object.values(REASON).sort());
  });
});
