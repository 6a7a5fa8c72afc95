import { describe, expect, it } from 'vitest';
import { EMISSION_ATTRIBUTE, emissionAttributes, requestHashOf, type ScheduledEvent } from '../src/domain/event.js';
import { REASON } from '../src/domain/reasons.js';
import { failureNotice } from '../src/domain/failure.js';
import { encodeDelayQueueMessage } from '../src/domain/messages.js';
import { firstIllFormedString } from '../src/domain/unicode.js';
import { MAX_NESTING_DEPTH, parseInputMessage, type ParseResult } from '../src/domain/validation.js';
import { DEFAULTS } from '../src/config.js';
import { inputMessageId, parse, PARSED_AT, REGION, SCHEDULER_TOPICS, scheduleRequest, tenant, topicArn, validate } from './factories.js';

type Rejection = Extract<ParseResult, { accepted: false }>;

function rejected(result: ParseResult): Rejection {
  if (result.accepted) throw new Error(`expected a rejection, got ${JSON.stringify(result.request)}`);
  return result;
}

function accepted(result: ParseResult): ScheduledEvent {
  if (!result.accepted) throw new Error(`expected an event, got ${result.error.reason}: ${result.error.message}`);
  if (result.request.kind !== 'schedule') throw new Error(`expected a schedule request, got ${result.request.kind}`);
  return result.request.event;
}

/** One publish's text on the public tenant's topic. */
function parsePublic(text: string): ParseResult {
  return parse(text);
}

const SNS_MESSAGE_LIMIT_BYTES = 256 * 1024;

/** What the scheduler's string attributes add to an emission, counted as SNS counts: name, type, value. */
function attributeBytes(event: ScheduledEvent): number {
  const attributes: Record<string, string> = {
    [EMISSION_ATTRIBUTE.eventId]: event.id,
    [EMISSION_ATTRIBUTE.scheduledAt]: new Date(event.dueAt).toISOString(),
    [EMISSION_ATTRIBUTE.publishedAt]: new Date(event.dueAt).toISOString(),
    ...(event.user !== undefined ? { [EMISSION_ATTRIBUTE.user]: event.user } : {}),
    [EMISSION_ATTRIBUTE.tenant]: event.tenant,
  };
  return Object.entries(attributes).reduce(
    (sum, [name, value]) => sum + Buffer.byteLength(name) + Buffer.byteLength('String') + Buffer.byteLength(value),
    0,
  );
}

describe('a valid schedule request', () => {
  it('becomes an event carrying its fields and its due time in epoch milliseconds', () => {
    const failureTopic = topicArn('client-failures');
    const event = accepted(validate({ date: '2030-06-15T12:30:00.250Z', user: 'bob', payload: 'hello', failure_topic: failureTopic }));
    expect(event).toMatchObject({
      user: 'bob',
      target: topicArn('client-target'),
      payload: 'hello',
      failureTopic,
      dueAt: Date.UTC(2030, 5, 15, 12, 30, 0, 250),
    });
  });

  it("accepts a target in the scheduler's partition, whichever it is", () => {
    const target = 'arn:aws-cn:sns:cn-north-1:123456789012:orders_v2-b';
    const scope = {
      tenant: tenant(),
      region: 'cn-north-1',
      partition: 'aws-cn',
      schedulerTopics: SCHEDULER_TOPICS,
      now: PARSED_AT,
      maxScheduleAheadSeconds: DEFAULTS.maxScheduleAheadSeconds,
      defaultCatchUpSeconds: DEFAULTS.emitMaxAgeSeconds,
    };
    expect(accepted(parseInputMessage(JSON.stringify(scheduleRequest({ target })), inputMessageId(), scope)).target).toBe(target);
  });
});

describe("a tenant's user switch (requireUser)", () => {
  const lenient = (id = 'public') =>
    tenant(id, {
      public: { requireUser: false },
      tenants: [{ id: 'acme', accounts: ['210987654321'], requireUser: false }],
    });

  it('refuses a request without user by default, as MISSING_FIELD', () => {
    expect(rejected(validate({ user: undefined })).error).toMatchObject({ reason: REASON.MISSING_FIELD, details: { field: 'user' } });
    expect(tenant().requireUser).toBe(true);
  });

  it('accepts one where the tenant does not require a user: an event without one, delivered without the user attribute', () => {
    const event = accepted(validate({ user: undefined }, inputMessageId(), lenient()));
    expect(event).not.toHaveProperty('user');
    expect(Object.keys(emissionAttributes(event, PARSED_AT))).not.toContain(EMISSION_ATTRIBUTE.user);
    // Still refused when the user is there and malformed.
    expect(rejected(validate({ user: '' }, inputMessageId(), lenient())).error.reason).toBe(REASON.INVALID_FIELD);
  });

  it("keeps a public idempotency key without user in the tenant's scope: one event for every publisher of the id, another than any user's", () => {
    const first = accepted(validate({ user: undefined, id: 'order-1' }, inputMessageId(), lenient()));
    const again = accepted(validate({ user: undefined, id: 'order-1' }, inputMessageId(), lenient()));
    const bobs = accepted(validate({ user: 'bob', id: 'order-1' }, inputMessageId(), lenient()));
    expect(again.id).toBe(first.id);
    expect(bobs.id).not.toBe(first.id);
    // The same id with and without a user, on a registered tenant (whose ids are the tenant's in any case): one event, two requests.
    const acme = lenient('acme');
    const target = topicArn('orders', REGION, '210987654321');
    const withUser = accepted(validate({ target, id: 'order-1' }, inputMessageId(), acme));
    const without = accepted(validate({ target, user: undefined, id: 'order-1' }, inputMessageId(), acme));
    expect(without.id).toBe(withUser.id);
    expect(requestHashOf(without)).not.toBe(requestHashOf(withUser));
  });
});

describe('topics in another region', () => {
  it.each([
    ['another region', topicArn('orders', 'us-east-1')],
    ['another partition', 'arn:aws-cn:sns:cn-north-1:123456789012:orders'],
    // No such topic: the scheduler's region is in its partition alone.
    ["another partition, named with the scheduler's region", `arn:aws-us-gov:sns:${REGION}:123456789012:orders`],
  ])('TARGET_IN_OTHER_REGION for a target in %s, reported on the failure topic', (_case, target) => {
    const failureTopic = topicArn('client-failures');
    const result = rejected(validate({ target, failure_topic: failureTopic }));
    expect(result.error.reason).toBe(REASON.TARGET_IN_OTHER_REGION);
    expect(result.error.details).toMatchObject({ field: 'target', schedulerRegion: REGION });
    expect(result.failureTopic).toBe(failureTopic);
  });

  it('FAILURE_TOPIC_IN_OTHER_REGION for a failure topic in another region, which is never told', () => {
    const result = rejected(validate({ failure_topic: topicArn('client-failures', 'us-east-1') }));
    expect(result.error.reason).toBe(REASON.FAILURE_TOPIC_IN_OTHER_REGION);
    expect(result.error.details).toEqual({ field: 'failure_topic', region: 'us-east-1', schedulerRegion: REGION });
    expect(result.failureTopic).toBeUndefined();
    expect(rejected(validate({ date: 'never', failure_topic: topicArn('client-failures', 'us-east-1') })).failureTopic).toBeUndefined();
  });

  it("FAILURE_TOPIC_IN_OTHER_REGION for a failure topic in another partition, though named with the scheduler's region", () => {
    const result = rejected(validate({ failure_topic: `arn:aws-cn:sns:${REGION}:123456789012:client-failures` }));
    expect(result.error.reason).toBe(REASON.FAILURE_TOPIC_IN_OTHER_REGION);
    expect(result.error.details).toEqual({
      field: 'failure_topic',
      region: REGION,
      schedulerRegion: REGION,
      partition: 'aws-cn',
      schedulerPartition: 'aws',
    });
    expect(result.failureTopic).toBeUndefined();
  });
});

describe('nesting', () => {
  /** A schedule request carrying an extra field nested `depth` deep (the request itself is one level). */
  const nested = (depth: number, extra: Record<string, unknown> = {}) =>
    JSON.stringify(scheduleRequest(extra)).replace(/}$/, `,"extra":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`);

  it(`accepts a message nested ${MAX_NESTING_DEPTH} deep`, () => {
    expect(parse(nested(MAX_NESTING_DEPTH)).accepted).toBe(true);
  });

  it('TOO_DEEPLY_NESTED one level deeper, quoting the text, on the failure topic', () => {
    const failureTopic = topicArn('client-failures');
    const text = nested(MAX_NESTING_DEPTH + 1, { failure_topic: failureTopic });
    const result = rejected(parse(text));
    expect(result.error.reason).toBe(REASON.TOO_DEEPLY_NESTED);
    expect(result.error.details).toEqual({ depth: MAX_NESTING_DEPTH + 1, limit: MAX_NESTING_DEPTH });
    expect(result.input).toBe(text);
    expect(result.failureTopic).toBe(failureTopic);
  });

  it('refuses a message nested far deeper than a serialization can take, and its notice can be sent', () => {
    const text = nested(100_000, { failure_topic: topicArn('client-failures') });
    expect(() => JSON.stringify(JSON.parse(text))).toThrow(RangeError);
    const result = rejected(parse(text));
    expect(result.error.reason).toBe(REASON.TOO_DEEPLY_NESTED);
    expect(() =>
      encodeDelayQueueMessage({
        kind: 'notice',
        noticeId: 'n-1',
        failureTopic: result.failureTopic,
        notice: failureNotice(result.error.reason, result.error.message, result.input, 0),
      }),
    ).not.toThrow();
  });

  it('does not count brackets inside strings', () => {
    expect(parse(JSON.stringify(scheduleRequest({ payload: '['.repeat(1000), user: '{"\\'.repeat(50) }))).accepted).toBe(true);
  });
});

describe('rejection reasons', () => {
  it('INVALID_JSON when the message is not JSON, keeping the raw text', () => {
    const result = rejected(parsePublic('{"date": "2030-01-01"'));
    expect(result.error.reason).toBe(REASON.INVALID_JSON);
    expect(result.input).toBe('{"date": "2030-01-01"');
  });

  it.each([['[]'], ['"a string"'], ['42'], ['null'], ['true']])('NOT_AN_OBJECT for the JSON %s', (text) => {
    expect(rejected(parsePublic(text)).error.reason).toBe(REASON.NOT_AN_OBJECT);
  });

  it.each([['date'], ['target'], ['user'], ['payload']])('MISSING_FIELD naming the absent "%s"', (field) => {
    const { error } = rejected(validate({ [field]: undefined }));
    expect(error.reason).toBe(REASON.MISSING_FIELD);
    expect(error.details).toEqual({ field });
    expect(error.message).toContain(field);
  });

  it('MISSING_FIELD before any other fault', () => {
    expect(rejected(validate({ user: undefined, target: 'nope', date: 'never' })).error.reason).toBe(REASON.MISSING_FIELD);
  });

  it.each([
    ['date', 20300615],
    ['date', ''],
    ['user', ''],
    ['user', 7],
    ['user', 'u'.repeat(257)],
    ['payload', ''],
    ['payload', { reminder: 'stand-up' }],
    ['payload', 12],
    ['payload', null],
    ['id', ''],
    ['id', 99],
  ])('INVALID_FIELD naming "%s" when it is %j', (field, value) => {
    const { error } = rejected(validate({ [field]: value }));
    expect(error.reason).toBe(REASON.INVALID_FIELD);
    expect(error.details).toEqual({ field });
  });

  it.each([
    ['garbage', 'next tuesday'],
    ['31 February', '2030-02-31T10:00:00Z'],
    ['hour 25', '2030-06-15T25:00:00Z'],
  ])('INVALID_DATE for %s', (_case, date) => {
    const { error } = rejected(validate({ date }));
    expect(error.reason).toBe(REASON.INVALID_DATE);
    expect(error.details).toEqual({ field: 'date' });
  });

  it.each([
    ['an SQS queue ARN', 'arn:aws:sqs:eu-west-1:123456789012:client-queue'],
    ['a FIFO topic', topicArn('client-target.fifo')],
    ['garbage', 'client-target'],
    ['a topic ARN with a short account', 'arn:aws:sns:eu-west-1:12345:client-target'],
  ])('INVALID_TARGET for %s', (_case, target) => {
    const { error } = rejected(validate({ target }));
    expect(error.reason).toBe(REASON.INVALID_TARGET);
    expect(error.details).toEqual({ field: 'target' });
  });

  it.each([
    ['an SQS queue ARN', 'arn:aws:sqs:eu-west-1:123456789012:client-failures'],
    ['a FIFO topic', topicArn('client-failures.fifo')],
    ['garbage', 'failures'],
  ])('INVALID_FAILURE_TOPIC for %s', (_case, failureTopic) => {
    const { error } = rejected(validate({ failure_topic: failureTopic }));
    expect(error.reason).toBe(REASON.INVALID_FAILURE_TOPIC);
    expect(error.details).toEqual({ field: 'failure_topic' });
  });
});

describe("the scheduler's own topics", () => {
  const schedulerTopic = (name: string) => topicArn(`${SCHEDULER_TOPICS.topicPrefix}-${name}`, REGION, SCHEDULER_TOPICS.accountId);
  const failureTopic = topicArn('client-failures');

  it.each([
    ["a tenant's input topic", schedulerTopic('tenant-acme')],
    ['the shared input topic', schedulerTopic('input')],
    ['the alarm topic', schedulerTopic('alarms')],
  ])('TARGET_IS_SCHEDULER_TOPIC for %s, reported on the failure topic', (_case, target) => {
    const result = rejected(validate({ target, payload: '{"action":"cancel","id":"order-42"}', failure_topic: failureTopic }));
    expect(result.error.reason).toBe(REASON.TARGET_IS_SCHEDULER_TOPIC);
    expect(result.error.details).toEqual({ field: 'target' });
    expect(result.failureTopic).toBe(failureTopic);
  });

  it("TARGET_IS_SCHEDULER_TOPIC for a target the registered tenant could otherwise name (its own account is the scheduler's)", () => {
    const sharing = tenant('acme', { tenants: [{ id: 'acme', accounts: [SCHEDULER_TOPICS.accountId ?? ''] }] });
    const result = rejected(validate({ target: schedulerTopic('tenant-acme') }, inputMessageId(), sharing));
    expect(result.error.reason).toBe(REASON.TARGET_IS_SCHEDULER_TOPIC);
  });

  it('FAILURE_TOPIC_IS_SCHEDULER_TOPIC for a failure topic among them, which is never told, whatever else the request did wrong', () => {
    const result = rejected(validate({ failure_topic: schedulerTopic('input') }));
    expect(result.error.reason).toBe(REASON.FAILURE_TOPIC_IS_SCHEDULER_TOPIC);
    expect(result.error.details).toEqual({ field: 'failure_topic' });
    expect(result.failureTopic).toBeUndefined();
    expect(rejected(validate({ date: 'never', failure_topic: schedulerTopic('input') })).failureTopic).toBeUndefined();
    expect(rejected(validate({ target: schedulerTopic('input'), failure_topic: schedulerTopic('alarms') })).failureTopic).toBeUndefined();
  });

  it('never takes one as where a later refusal of a cancel is reported', () => {
    const result = parse(JSON.stringify({ action: 'cancel', event_id: 'm-1234', failure_topic: schedulerTopic('input') }));
    expect(result.accepted).toBe(true);
    expect(result.failureTopic).toBeUndefined();
  });

  it('takes a topic whose name only looks like theirs, in another account', () => {
    expect(accepted(validate({ target: topicArn(`${SCHEDULER_TOPICS.topicPrefix}-input`, REGION, '123456789012') })).target).toContain(
      '-input',
    );
  });
});

describe('strings that are not well-formed Unicode', () => {
  const failureTopic = topicArn('client-failures');
  /** A request's JSON text with `jsonEscape` where MARK was: JSON's escapes are how a client publishes a lone surrogate. */
  const withEscape = (request: Record<string, unknown>, jsonEscape: string): string => JSON.stringify(request).replace('MARK', jsonEscape);
  const withLoneSurrogate = (request: Record<string, unknown>): string => withEscape(request, '\\ud800');

  it.each([
    ['the payload', { payload: 'bad MARK' }, 'field "payload"', 'payload'],
    ['the user', { user: 'MARK' }, 'field "user"', 'user'],
    ['the id', { id: 'order-MARK' }, 'field "id"', 'id'],
    ['a key', { MARK: 'x' }, 'the key "\ufffd"', '\ufffd'],
    ['a nested value', { extra: { list: ['MARK'] } }, 'field "extra/list/0"', 'extra/list/0'],
  ])('INVALID_UNICODE in %s, naming the field, with a notice that can be published', (_case, overrides, named, field) => {
    const result = rejected(parse(withLoneSurrogate(scheduleRequest({ ...overrides, failure_topic: failureTopic }))));
    expect(result.error.reason).toBe(REASON.INVALID_UNICODE);
    expect(result.error.details).toEqual({ field });
    expect(result.error.message).toContain(named);
    expect(result.failureTopic).toBe(failureTopic);
    // Quoted with the lone surrogate replaced: JSON.stringify would escape it, but a client parsing the notice would get it back.
    const notice = failureNotice(result.error.reason, result.error.message, result.input, 0, { details: result.error.details });
    expect(firstIllFormedString(notice)).toBeUndefined();
    expect(JSON.stringify(notice)).not.toMatch(/\\ud800/i);
  });

  it('INVALID_UNICODE in a cancel or reschedule too', () => {
    const on = tenant('acme');
    const cancel = withLoneSurrogate({ action: 'cancel', id: 'order-MARK' });
    const reschedule = withLoneSurrogate({ action: 'reschedule', id: 'order-42', date: '2030-06-15T00:00:00Z', user: 'MARK' });
    expect(rejected(parse(cancel, on)).error).toMatchObject({ reason: REASON.INVALID_UNICODE, details: { field: 'id' } });
    expect(rejected(parse(reschedule, on)).error).toMatchObject({ reason: REASON.INVALID_UNICODE, details: { field: 'user' } });
  });

  it('accepts surrogate pairs, which are characters', () => {
    expect(accepted(parse(withEscape(scheduleRequest({ payload: 'smile MARK' }), '\\ud83d\\ude00'))).payload).toBe('smile \u{1f600}');
  });
});

describe('how far ahead', () => {
  const limitSeconds = DEFAULTS.maxScheduleAheadSeconds;
  const latest = PARSED_AT + limitSeconds * 1000;

  it('takes a date up to the limit ahead, to the millisecond', () => {
    expect(accepted(validate({ date: new Date(latest).toISOString() })).dueAt).toBe(latest);
  });

  it.each([
    ['a millisecond past the limit', new Date(latest + 1).toISOString()],
    ['year 9999', '9999-12-31T23:59:59.999Z'],
  ])('DATE_TOO_FAR for %s, with the limit and the latest date taken', (_case, date) => {
    const failureTopic = topicArn('client-failures');
    const result = rejected(validate({ date, failure_topic: failureTopic }));
    expect(result.error.reason).toBe(REASON.DATE_TOO_FAR);
    expect(result.error.details).toEqual({ field: 'date', limit: limitSeconds, latest: new Date(latest).toISOString() });
    expect(result.failureTopic).toBe(failureTopic);
  });

  it('DATE_TOO_FAR for a reschedule too', () => {
    const result = rejected(parse(JSON.stringify({ action: 'reschedule', id: 'order-42', date: '9999-01-01' }), tenant('acme')));
    expect(result.error).toMatchObject({ reason: REASON.DATE_TOO_FAR, details: { limit: limitSeconds } });
  });
});

describe('payload size', () => {
  const fields = { id: 'size-check', user: 'carol' };
  const overhead = attributeBytes(accepted(validate({ ...fields, payload: 'x' })));

  it('accepts a payload that fills the SNS message exactly', () => {
    const payload = 'x'.repeat(SNS_MESSAGE_LIMIT_BYTES - overhead);
    expect(accepted(validate({ ...fields, payload })).payload).toHaveLength(SNS_MESSAGE_LIMIT_BYTES - overhead);
  });

  it('rejects one byte more as PAYLOAD_TOO_LARGE, with the size and the limit', () => {
    const payload = 'x'.repeat(SNS_MESSAGE_LIMIT_BYTES - overhead + 1);
    const { error } = rejected(validate({ ...fields, payload }));
    expect(error.reason).toBe(REASON.PAYLOAD_TOO_LARGE);
    expect(error.details).toEqual({ bytes: SNS_MESSAGE_LIMIT_BYTES + 1, limit: SNS_MESSAGE_LIMIT_BYTES });
  });

  it('counts UTF-8 bytes, not characters', () => {
    // Each "é" is two bytes: half as many characters as the limit allows still do not fit.
    const characters = Math.floor((SNS_MESSAGE_LIMIT_BYTES - overhead) / 2) + 1;
    expect(rejected(validate({ ...fields, payload: 'é'.repeat(characters) })).error.reason).toBe(REASON.PAYLOAD_TOO_LARGE);
    accepted(validate({ ...fields, payload: 'é'.repeat(characters - 1) }));
  });
});

describe('where a rejection is reported', () => {
  const failureTopic = topicArn('client-failures');

  it('to the failure topic of a request rejected for another reason', () => {
    const result = rejected(validate({ date: '2030-02-31', failure_topic: failureTopic }));
    expect(result.failureTopic).toBe(failureTopic);
    expect(result.input).toEqual(scheduleRequest({ date: '2030-02-31', failure_topic: failureTopic }));
  });

  it('to the failure topic of a request that is missing a field', () => {
    expect(rejected(validate({ payload: undefined, failure_topic: failureTopic })).failureTopic).toBe(failureTopic);
  });

  it('nowhere when the failure topic itself is invalid', () => {
    expect(rejected(validate({ failure_topic: 'arn:aws:sqs:eu-west-1:123456789012:q' })).failureTopic).toBeUndefined();
    expect(rejected(validate({ date: 'never', failure_topic: 42 })).failureTopic).toBeUndefined();
  });

  it('nowhere when the message is not a JSON object', () => {
    expect(rejected(parsePublic(`{"failure_topic":"${failureTopic}"`)).failureTopic).toBeUndefined();
    expect(rejected(parsePublic(JSON.stringify([failureTopic]))).failureTopic).toBeUndefined();
  });
});

describe('event identity', () => {
  const eventId = (overrides: Record<string, unknown>, messageId = inputMessageId()): string => accepted(validate(overrides, messageId)).id;

  it('is the same for the same id from the same user, whatever the message', () => {
    expect(eventId({ user: 'alice', id: 'invoice-42' })).toBe(eventId({ user: 'alice', id: 'invoice-42', payload: 'other' }));
  });

  it('differs for the same id from different users', () => {
    expect(eventId({ user: 'alice', id: 'invoice-42' })).not.toBe(eventId({ user: 'bob', id: 'invoice-42' }));
  });

  it('keeps user and id apart, so no user can take over another user id by shifting characters', () => {
    expect(eventId({ user: 'ab', id: 'c' })).not.toBe(eventId({ user: 'a', id: 'bc' }));
  });

  it('without an id, follows the input message: a redelivery is the same event, another publish is not', () => {
    const messageId = inputMessageId();
    expect(eventId({}, messageId)).toBe(eventId({}, messageId));
    expect(eventId({}, messageId)).not.toBe(eventId({}));
  });

  it('never confuses a client id with an input message id of the same text', () => {
    const messageId = inputMessageId();
    expect(eventId({ user: 'alice', id: messageId })).not.toBe(eventId({ user: 'alice' }, messageId));
  });
});

describe('a cancel by label', () => {
  const acme = tenant('acme');
  const parseAcme = (request: Record<string, unknown>): ParseResult => parse(JSON.stringify(request), acme);

  it('asks for a bulk cancel of the tenant’s events with the label, before the bound when given', () => {
    const result = parseAcme({ action: 'cancel', label: 'campaign-7', due_before: '2030-02-01T00:00:00Z' });
    if (!result.accepted) throw new Error(result.error.message);
    expect(result.request).toEqual({ kind: 'bulk-cancel', label: 'campaign-7', dueBefore: Date.UTC(2030, 1, 1) });
    expect(parseAcme({ action: 'cancel', label: 'a.b:c_d-1' }).accepted).toBe(true);
  });

  it.each([
    ['an empty label', { action: 'cancel', label: '' }, REASON.INVALID_FIELD, 'label'],
    ['a label starting with a dot', { action: 'cancel', label: '.hidden' }, REASON.INVALID_FIELD, 'label'],
    ['a label of 65 characters', { action: 'cancel', label: 'x'.repeat(65) }, REASON.INVALID_FIELD, 'label'],
    ['a label with a comma', { action: 'cancel', label: 'a,b' }, REASON.INVALID_FIELD, 'label'],
    ['a reschedule by label', { action: 'reschedule', label: 'campaign-7', date: '2030-02-01T00:00:00Z' }, REASON.INVALID_FIELD, 'label'],
    ['a label and an id', { action: 'cancel', label: 'campaign-7', id: 'order-1' }, REASON.INVALID_FIELD, 'id'],
    ['a bound that is not a date', { action: 'cancel', label: 'campaign-7', due_before: 'soon' }, REASON.INVALID_DATE, 'due_before'],
    [
      'a bound without a label',
      { action: 'cancel', id: 'order-1', due_before: '2030-02-01T00:00:00Z' },
      REASON.INVALID_FIELD,
      'due_before',
    ],
  ])('refuses %s', (_, request, reason, field) => {
    const { error } = rejected(parseAcme(request));
    expect(error.reason).toBe(reason);
    expect(error.details.field).toBe(field);
  });

  it('is refused on the shared topic as CONTROL_NOT_ALLOWED', () => {
    const { error } = rejected(parsePublic(JSON.stringify({ action: 'cancel', label: 'campaign-7' })));
    expect(error.reason).toBe(REASON.CONTROL_NOT_ALLOWED);
    expect(error.details.field).toBe('label');
  });
});
