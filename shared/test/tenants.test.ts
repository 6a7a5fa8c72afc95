import { describe, expect, it } from 'vitest';
import { EVENT_STATE, changeRefusal, type EventRecord } from '../src/domain/lifecycle.js';
import { REASON } from '../src/domain/reasons.js';
import { occurrenceId } from '../src/domain/table-keys.js';
import tenantsSchema from '../schema/tenants.schema.json' with { type: 'json' };
import { MAX_SERIES_OCCURRENCES_PER_MINUTE } from '../src/domain/limits.js';
import {
  DEFAULT_PUBLIC_MAX_CONTROL_PER_SECOND,
  DEFAULT_QUOTAS,
  DEFAULT_SERIES_OCCURRENCES_PER_MINUTE,
  inputTopicName,
  parseTenantsDocument,
  PUBLIC_TENANT_ID,
  TenantsDocumentError,
} from '../src/domain/tenants.js';
import type { ParseResult } from '../src/domain/validation.js';
import { inputMessageId, parse, registry, SCHEDULER_TOPICS, scheduleRequest, tenant, topicArn, validate } from './factories.js';

const ACME_ACCOUNT = '111111111111';
const OTHER_ACCOUNT = '222222222222';
/** No tenant's. */
const THIRD_ACCOUNT = '333333333333';
const acme = () => tenant('acme');

function reason(result: ParseResult): string | undefined {
  return result.accepted ? undefined : result.error.reason;
}

function request(result: ParseResult) {
  if (!result.accepted) throw new Error(`expected acceptance, got ${result.error.reason}: ${result.error.message}`);
  return result.request;
}

function control(body: Record<string, unknown>, on = acme()): ParseResult {
  return parse(JSON.stringify(body), on);
}

describe('the tenant registry', () => {
  it('knows a tenant by its input topic, whatever the account and region of the ARN', () => {
    const tenants = registry();
    expect(tenants.forTopic(topicArn(inputTopicName('scheduler', 'acme')))?.id).toBe('acme');
    expect(tenants.forTopic(topicArn('scheduler-input', 'us-east-1', '000000000000'))?.id).toBe(PUBLIC_TENANT_ID);
  });

  it('knows no tenant for any other topic', () => {
    const tenants = registry();
    expect(tenants.forTopic(topicArn('scheduler-tenant-globex'))).toBeUndefined();
    expect(tenants.forTopic(topicArn('other-input'))).toBeUndefined();
    expect(tenants.forTopic('not an arn')).toBeUndefined();
  });

  it('gives every tenant the default quotas unless the operator sets them', () => {
    const tenants = registry({ public: { maxOpenEvents: 10 }, tenants: [{ id: 'acme', accounts: [ACME_ACCOUNT], maxIngestPerSecond: 3 }] });
    expect(tenants.tenant(PUBLIC_TENANT_ID)?.quotas).toEqual({
      maxOpenEvents: 10,
      maxIngestPerSecond: DEFAULT_QUOTAS.maxIngestPerSecond,
      maxControlPerSecond: DEFAULT_PUBLIC_MAX_CONTROL_PER_SECOND,
    });
    expect(tenants.tenant('acme')?.quotas).toEqual({
      maxOpenEvents: DEFAULT_QUOTAS.maxOpenEvents,
      maxIngestPerSecond: 3,
      maxControlPerSecond: DEFAULT_QUOTAS.maxControlPerSecond,
    });
  });

  it('bounds the control requests taken a second: 1,000 for a registered tenant, strict for the public one, unless the operator sets it', () => {
    const defaults = registry({ tenants: [{ id: 'acme', accounts: [ACME_ACCOUNT] }] });
    expect(defaults.tenant('acme')?.quotas.maxControlPerSecond).toBe(1_000);
    expect(defaults.tenant(PUBLIC_TENANT_ID)?.quotas.maxControlPerSecond).toBe(100);
    const set = registry({
      public: { maxControlPerSecond: 0 },
      tenants: [{ id: 'acme', accounts: [ACME_ACCOUNT], maxControlPerSecond: 5 }],
    });
    expect(set.tenant('acme')?.quotas).toMatchObject({ maxControlPerSecond: 5, maxIngestPerSecond: DEFAULT_QUOTAS.maxIngestPerSecond });
    expect(set.tenant(PUBLIC_TENANT_ID)?.quotas.maxControlPerSecond).toBe(0);
  });

  it('bounds the occurrences a series is delivered a minute: 10 for a registered tenant, strict for the public one, unless the operator sets it', () => {
    const defaults = registry({ tenants: [{ id: 'acme', accounts: [ACME_ACCOUNT] }] });
    expect(defaults.tenant('acme')?.seriesOccurrencesPerMinute).toBe(DEFAULT_SERIES_OCCURRENCES_PER_MINUTE.registered);
    expect(defaults.tenant(PUBLIC_TENANT_ID)?.seriesOccurrencesPerMinute).toBe(2);
    const set = registry({
      public: { seriesOccurrencesPerMinute: 1 },
      tenants: [{ id: 'acme', accounts: [ACME_ACCOUNT], seriesOccurrencesPerMinute: MAX_SERIES_OCCURRENCES_PER_MINUTE }],
    });
    expect(set.tenant(PUBLIC_TENANT_ID)?.seriesOccurrencesPerMinute).toBe(1);
    expect(set.tenant('acme')?.seriesOccurrencesPerMinute).toBe(MAX_SERIES_OCCURRENCES_PER_MINUTE);
  });

  it.each([0, MAX_SERIES_OCCURRENCES_PER_MINUTE + 1, 2.5, '10'])('refuses a series bound a minute of %j', (bound) => {
    expect(() => parseTenantsDocument({ public: { seriesOccurrencesPerMinute: bound } })).toThrow(/seriesOccurrencesPerMinute/);
    expect(() => parseTenantsDocument({ tenants: [{ id: 'acme', accounts: [ACME_ACCOUNT], seriesOccurrencesPerMinute: bound }] })).toThrow(
      /seriesOccurrencesPerMinute/,
    );
  });

  it('says in its schema the limit the scheduler sets on the series bound a minute', () => {
    expect(tenantsSchema.definitions.seriesOccurrencesPerMinute.maximum).toBe(MAX_SERIES_OCCURRENCES_PER_MINUTE);
  });

  it('keeps the public tenant enabled unless the operator disables it', () => {
    expect(registry().tenant(PUBLIC_TENANT_ID)?.enabled).toBe(true);
    expect(registry({ public: { enabled: false } }).tenant(PUBLIC_TENANT_ID)?.enabled).toBe(false);
  });

  it.each([
    ['an unknown field', { tenants: [{ id: 'acme', accounts: [ACME_ACCOUNT], quota: 1 }] }],
    ['a tenant without accounts', { tenants: [{ id: 'acme', accounts: [] }] }],
    ['an account that is not 12 digits', { tenants: [{ id: 'acme', accounts: ['1234'] }] }],
    ['an id with capitals', { tenants: [{ id: 'Acme', accounts: [ACME_ACCOUNT] }] }],
    ['the reserved id "public"', { tenants: [{ id: 'public', accounts: [ACME_ACCOUNT] }] }],
    ['a negative quota', { public: { maxOpenEvents: -1 } }],
    ['a negative control quota', { tenants: [{ id: 'acme', accounts: [ACME_ACCOUNT], maxControlPerSecond: -1 }] }],
    ['a control quota that is not whole', { public: { maxControlPerSecond: 1.5 } }],
    [
      'the same id twice',
      {
        tenants: [
          { id: 'acme', accounts: [ACME_ACCOUNT] },
          { id: 'acme', accounts: [OTHER_ACCOUNT] },
        ],
      },
    ],
  ])('refuses a registry with %s', (_case, document) => {
    expect(() => parseTenantsDocument(document)).toThrow(TenantsDocumentError);
  });
});

describe('what a tenant may target', () => {
  it("accepts topics in the tenant's own accounts", () => {
    const target = topicArn('orders', 'eu-west-1', ACME_ACCOUNT);
    expect(
      reason(validate({ target, failure_topic: topicArn('failures', 'eu-west-1', ACME_ACCOUNT) }, inputMessageId(), acme())),
    ).toBeUndefined();
  });

  it('refuses a target in another account as TARGET_NOT_ALLOWED, reported on its own failure topic', () => {
    const failureTopic = topicArn('failures', 'eu-west-1', ACME_ACCOUNT);
    const result = validate(
      { target: topicArn('orders', 'eu-west-1', OTHER_ACCOUNT), failure_topic: failureTopic },
      inputMessageId(),
      acme(),
    );
    expect(reason(result)).toBe(REASON.TARGET_NOT_ALLOWED);
    expect(result.failureTopic).toBe(failureTopic);
  });

  it('refuses a failure topic in another account, and never reports to it', () => {
    const result = validate(
      { target: topicArn('orders', 'eu-west-1', ACME_ACCOUNT), failure_topic: topicArn('failures', 'eu-west-1', OTHER_ACCOUNT) },
      inputMessageId(),
      acme(),
    );
    expect(reason(result)).toBe(REASON.FAILURE_TOPIC_NOT_ALLOWED);
    expect(result.failureTopic).toBeUndefined();
  });

  it('reports no other rejection to a foreign failure topic either', () => {
    const result = validate({ date: 'never', failure_topic: topicArn('failures', 'eu-west-1', OTHER_ACCOUNT) }, inputMessageId(), acme());
    expect(reason(result)).toBe(REASON.INVALID_DATE);
    expect(result.failureTopic).toBeUndefined();
  });

  it('accepts accounts the operator added for the tenant', () => {
    const on = tenant('acme', { tenants: [{ id: 'acme', accounts: [ACME_ACCOUNT], targetAccounts: [OTHER_ACCOUNT] }] });
    expect(reason(validate({ target: topicArn('orders', 'eu-west-1', OTHER_ACCOUNT) }, inputMessageId(), on))).toBeUndefined();
  });

  it('lets the public tenant target any account no tenant owns, unless the operator restricts it', () => {
    expect(reason(validate({ target: topicArn('orders', 'eu-west-1', OTHER_ACCOUNT) }))).toBeUndefined();
    const restricted = tenant(PUBLIC_TENANT_ID, { public: { targetAccounts: [THIRD_ACCOUNT] } });
    expect(reason(validate({ target: topicArn('orders', 'eu-west-1', OTHER_ACCOUNT) }, inputMessageId(), restricted))).toBe(
      REASON.TARGET_NOT_ALLOWED,
    );
    expect(reason(validate({ target: topicArn('orders', 'eu-west-1', THIRD_ACCOUNT) }, inputMessageId(), restricted))).toBeUndefined();
  });

  it("never lets the public tenant reach a registered tenant's account, not even for its failure notices", () => {
    const acmeTopic = topicArn('orders', 'eu-west-1', ACME_ACCOUNT);
    expect(reason(validate({ target: acmeTopic }))).toBe(REASON.TARGET_NOT_ALLOWED);
    const result = validate({ target: topicArn('orders', 'eu-west-1', OTHER_ACCOUNT), failure_topic: acmeTopic });
    expect(reason(result)).toBe(REASON.FAILURE_TOPIC_NOT_ALLOWED);
    expect(result.failureTopic).toBeUndefined();
    expect(validate({ date: 'never', failure_topic: acmeTopic }).failureTopic).toBeUndefined();
  });

  it("never lets a tenant reach another's account, whatever the registry grants (one built without the registry check)", () => {
    const document = {
      public: { targetAccounts: [ACME_ACCOUNT] },
      tenants: [
        { id: 'acme', accounts: [ACME_ACCOUNT] },
        { id: 'globex', accounts: [OTHER_ACCOUNT], targetAccounts: [ACME_ACCOUNT] },
      ],
    };
    const acmeTopic = topicArn('orders', 'eu-west-1', ACME_ACCOUNT);
    expect(reason(validate({ target: acmeTopic }, inputMessageId(), tenant('globex', document)))).toBe(REASON.TARGET_NOT_ALLOWED);
    expect(reason(validate({ target: acmeTopic }, inputMessageId(), tenant(PUBLIC_TENANT_ID, document)))).toBe(REASON.TARGET_NOT_ALLOWED);
    expect(reason(validate({ target: acmeTopic }, inputMessageId(), tenant('acme', document)))).toBeUndefined();
  });

  it('lets two tenants that list the same account both target it: both own it', () => {
    const document = {
      tenants: [
        { id: 'acme', accounts: [ACME_ACCOUNT] },
        { id: 'globex', accounts: [ACME_ACCOUNT, OTHER_ACCOUNT] },
      ],
    };
    expect(() => parseTenantsDocument(document)).not.toThrow();
    for (const id of ['acme', 'globex'])
      expect(
        reason(validate({ target: topicArn('o', 'eu-west-1', ACME_ACCOUNT) }, inputMessageId(), tenant(id, document))),
      ).toBeUndefined();
    expect(reason(validate({ target: topicArn('o', 'eu-west-1', OTHER_ACCOUNT) }, inputMessageId(), tenant('acme', document)))).toBe(
      REASON.TARGET_NOT_ALLOWED,
    );
  });
});

describe('the registry check', () => {
  it.each([
    [
      "a tenant's",
      {
        tenants: [
          { id: 'acme', accounts: [ACME_ACCOUNT] },
          { id: 'globex', accounts: [OTHER_ACCOUNT], targetAccounts: [ACME_ACCOUNT] },
        ],
      },
      'tenant "globex"',
    ],
    [
      "the public tenant's",
      { public: { targetAccounts: [THIRD_ACCOUNT, ACME_ACCOUNT] }, tenants: [{ id: 'acme', accounts: [ACME_ACCOUNT] }] },
      'the public tenant',
    ],
  ])("refuses %s targetAccounts naming another tenant's own account, naming both", (_case, document, grantee) => {
    expect(() => parseTenantsDocument(document)).toThrow(TenantsDocumentError);
    expect(() => parseTenantsDocument(document)).toThrow(
      new RegExp(`${grantee} lists ${ACME_ACCOUNT} in targetAccounts, but it is an account of tenant "acme"`),
    );
  });

  it("takes a dead-letter topic in the tenant's own account or one granted to it, and gives it to the tenant", () => {
    const own = topicArn('dead-letters', 'eu-west-1', ACME_ACCOUNT);
    const granted = topicArn('dead-letters', 'eu-west-1', THIRD_ACCOUNT);
    const document = {
      public: { deadLetterTopic: topicArn('public-dead-letters', 'eu-west-1', OTHER_ACCOUNT) },
      tenants: [
        { id: 'acme', accounts: [ACME_ACCOUNT], deadLetterTopic: own },
        { id: 'globex', accounts: ['555555555555'], targetAccounts: [THIRD_ACCOUNT], deadLetterTopic: granted },
      ],
    };
    expect(parseTenantsDocument(document, { region: 'eu-west-1' })).toBe(document);
    expect(tenant('acme', document).deadLetterTopic).toBe(own);
    expect(tenant('globex', document).deadLetterTopic).toBe(granted);
    expect(tenant(PUBLIC_TENANT_ID, document).deadLetterTopic).toBe(document.public.deadLetterTopic);
    expect(tenant('acme').deadLetterTopic).toBeUndefined();
  });

  it.each([
    [
      "in another tenant's account",
      {
        tenants: [
          { id: 'acme', accounts: [ACME_ACCOUNT], deadLetterTopic: topicArn('d', 'eu-west-1', OTHER_ACCOUNT) },
          { id: 'globex', accounts: [OTHER_ACCOUNT] },
        ],
      },
      `tenant "acme"'s deadLetterTopic ${topicArn('d', 'eu-west-1', OTHER_ACCOUNT)} is in account ${OTHER_ACCOUNT}, an account of tenant "globex"`,
    ],
    [
      'in an account the tenant may not publish to',
      { tenants: [{ id: 'acme', accounts: [ACME_ACCOUNT], deadLetterTopic: topicArn('d', 'eu-west-1', THIRD_ACCOUNT) }] },
      `tenant "acme"'s deadLetterTopic ${topicArn('d', 'eu-west-1', THIRD_ACCOUNT)} is in account ${THIRD_ACCOUNT}, which it may not publish to`,
    ],
    [
      "of the public tenant in a registered tenant's account",
      { public: { deadLetterTopic: topicArn('d', 'eu-west-1', ACME_ACCOUNT) }, tenants: [{ id: 'acme', accounts: [ACME_ACCOUNT] }] },
      'an account of tenant "acme"',
    ],
    ['that is not an SNS topic ARN', { public: { deadLetterTopic: 'arn:aws:sqs:eu-west-1:123456789012:dead-letters' } }, 'deadLetterTopic'],
  ])('refuses a dead-letter topic %s', (_case, document, message) => {
    expect(() => parseTenantsDocument(document)).toThrow(TenantsDocumentError);
    expect(() => parseTenantsDocument(document)).toThrow(message);
  });

  it.each([
    ["the public tenant's", { public: { deadLetterTopic: topicArn('scheduler-tenant-acme', 'eu-west-1', '000000000000') } }],
    [
      "a tenant's",
      { tenants: [{ id: 'acme', accounts: ['000000000000'], deadLetterTopic: topicArn('scheduler-input', 'eu-west-1', '000000000000') }] },
    ],
  ])("refuses %s dead-letter topic that is one of the scheduler's own topics, when they are known", (_case, document) => {
    const scope = { schedulerTopics: SCHEDULER_TOPICS };
    expect(() => parseTenantsDocument(document, scope)).toThrow(TenantsDocumentError);
    expect(() => parseTenantsDocument(document, scope)).toThrow(
      /deadLetterTopic arn:aws:sns:eu-west-1:000000000000:scheduler-\S+ is one of the scheduler's own topics/,
    );
    expect(parseTenantsDocument(document)).toBe(document);
  });

  it("refuses a dead-letter topic among the scheduler's own topics named by ARN, in any account", () => {
    const alarms = topicArn('ops-alarms', 'eu-west-1', ACME_ACCOUNT);
    const document = { tenants: [{ id: 'acme', accounts: [ACME_ACCOUNT], deadLetterTopic: alarms }] };
    expect(() => parseTenantsDocument(document, { schedulerTopics: { ...SCHEDULER_TOPICS, ownTopicArns: [alarms] } })).toThrow(
      "is one of the scheduler's own topics",
    );
    expect(parseTenantsDocument(document, { schedulerTopics: SCHEDULER_TOPICS })).toBe(document);
  });

  it("refuses a dead-letter topic outside the scheduler's region, when the region is known", () => {
    const document = { tenants: [{ id: 'acme', accounts: [ACME_ACCOUNT], deadLetterTopic: topicArn('d', 'us-east-1', ACME_ACCOUNT) }] };
    expect(() => parseTenantsDocument(document, { region: 'eu-west-1' })).toThrow(`is not in the scheduler's region eu-west-1`);
    expect(parseTenantsDocument(document, { region: 'us-east-1' })).toBe(document);
    expect(parseTenantsDocument(document)).toBe(document);
  });
});

describe('whose event it is', () => {
  const acmeTarget = topicArn('orders', 'eu-west-1', ACME_ACCOUNT);
  const scheduled = (overrides: Record<string, unknown>, on = acme()) => {
    const parsed = request(validate({ target: acmeTarget, ...overrides }, inputMessageId(), on));
    if (parsed.kind !== 'schedule') throw new Error('expected a schedule request');
    return parsed.event;
  };

  it("is the topic's tenant, whatever the message says in user", () => {
    expect(scheduled({ user: 'globex' }).tenant).toBe('acme');
  });

  it('names the same event for the same client id whatever user a registered tenant writes', () => {
    expect(scheduled({ id: 'order-1', user: 'alice' }).id).toBe(scheduled({ id: 'order-1', user: 'mallory' }).id);
  });

  it("never names another tenant's event, whatever the client id and user", () => {
    const globex = tenant('globex', {
      tenants: [
        { id: 'globex', accounts: [ACME_ACCOUNT] },
        { id: 'acme', accounts: [ACME_ACCOUNT] },
      ],
    });
    expect(scheduled({ id: 'order-1' }, globex).id).not.toBe(scheduled({ id: 'order-1' }).id);
    const publicTarget = topicArn('orders', 'eu-west-1', OTHER_ACCOUNT);
    expect(scheduled({ id: 'order-1', user: 'acme', target: publicTarget }, tenant()).id).not.toBe(scheduled({ id: 'order-1' }).id);
  });
});

describe('cancel and reschedule requests', () => {
  it('name the event by client id, as the schedule request did', () => {
    const schedule = request(validate({ id: 'order-7', target: topicArn('o', 'eu-west-1', ACME_ACCOUNT) }, inputMessageId(), acme()));
    if (schedule.kind !== 'schedule') throw new Error('expected a schedule request');
    expect(request(control({ action: 'cancel', id: 'order-7' }))).toEqual({ kind: 'cancel', eventId: schedule.event.id });
  });

  it("name the event by the scheduler's id", () => {
    expect(request(control({ action: 'cancel', event_id: 'm-1234' }))).toEqual({ kind: 'cancel', eventId: 'm-1234' });
  });

  it('move an event to a new due time', () => {
    expect(request(control({ action: 'reschedule', event_id: 'm-1234', date: '2030-01-02T03:04:05.678Z' }))).toEqual({
      kind: 'reschedule',
      eventId: 'm-1234',
      dueAt: Date.UTC(2030, 0, 2, 3, 4, 5, 678),
    });
  });

  it.each([
    ['no id at all', { action: 'cancel' }, REASON.MISSING_FIELD],
    ['both ids', { action: 'cancel', id: 'a', event_id: 'm-1' }, REASON.INVALID_FIELD],
    ['a reschedule without a date', { action: 'reschedule', id: 'a' }, REASON.MISSING_FIELD],
    ['a reschedule to no real date', { action: 'reschedule', id: 'a', date: '2030-02-31' }, REASON.INVALID_DATE],
    ['an unknown action', { ...scheduleRequest(), action: 'delete' }, REASON.INVALID_FIELD],
  ])('refuse %s', (_case, body, expected) => {
    expect(reason(control(body))).toBe(expected);
  });

  it.each([
    ['a client id and its user', { action: 'cancel', id: 'a', user: 'alice' }, 'id'],
    ['a client id alone', { action: 'reschedule', id: 'a', date: '2030-01-02T03:04:05Z' }, 'id'],
    ['a c- event id, which anyone can compute from a user and an id', { action: 'cancel', event_id: `c-${'0'.repeat(40)}` }, 'event_id'],
    [
      "an occurrence's o- id, which every delivery of its series shows",
      { action: 'cancel', event_id: occurrenceId('s-m-1234', 0) },
      'event_id',
    ],
  ])('on the shared topic, refuse to name an event by %s (CONTROL_NOT_ALLOWED)', (_case, body, field) => {
    const result = control(body, tenant());
    expect(reason(result)).toBe(REASON.CONTROL_NOT_ALLOWED);
    if (result.accepted) throw new Error('expected a refusal');
    expect(result.error.details).toEqual({ field, use: 'event_id' });
    // The refusal names both ids the shared topic takes.
    expect(result.error.message).toContain('"m-<MessageId>"');
    expect(result.error.message).toContain('"s-m-<MessageId>"');
  });

  it('on the shared topic, name the event by the m- id of its publish, which only its publisher knows', () => {
    expect(request(control({ action: 'cancel', event_id: 'm-5f1d3a8e-6a61-4c1f-9d0b-1e2f3a4b5c6d' }, tenant()))).toEqual({
      kind: 'cancel',
      eventId: 'm-5f1d3a8e-6a61-4c1f-9d0b-1e2f3a4b5c6d',
    });
    expect(request(control({ action: 'reschedule', event_id: 'm-1234', date: '2030-01-02T03:04:05Z' }, tenant())).kind).toBe('reschedule');
    // A series by the s-m- id of its publish.
    expect(request(control({ action: 'cancel', event_id: 's-m-1234' }, tenant()))).toEqual({ kind: 'cancel', eventId: 's-m-1234' });
  });

  it("pause (with a note) and resume on a registered tenant's own topic; both refused on the shared topic (CONTROL_NOT_ALLOWED)", () => {
    expect(request(control({ action: 'pause', note: 'maintenance' }))).toEqual({ kind: 'pause', note: 'maintenance' });
    expect(request(control({ action: 'pause' }))).toEqual({ kind: 'pause', note: undefined });
    expect(request(control({ action: 'resume' }))).toEqual({ kind: 'resume' });
    for (const action of ['pause', 'resume']) {
      const result = control({ action }, tenant());
      expect(reason(result)).toBe(REASON.CONTROL_NOT_ALLOWED);
      if (result.accepted) throw new Error('expected a refusal');
      expect(result.error.details).toEqual({ field: 'action' });
    }
    expect(reason(control({ action: 'pause', note: 'x'.repeat(1025) }))).toBe(REASON.INVALID_FIELD);
  });

  it("on a registered tenant's topic, still name the event by client id or c- id", () => {
    const byId = request(control({ action: 'cancel', id: 'a' }));
    expect(byId.kind).toBe('cancel');
    expect(request(control({ action: 'cancel', event_id: byId.kind === 'cancel' ? byId.eventId : '' })).kind).toBe('cancel');
  });
});

describe('why a change is refused', () => {
  const NOW = 1_900_000_000_000;
  const CUTOFF_MS = 5_000;
  const record = (overrides: Partial<EventRecord> = {}): EventRecord => ({
    id: 'm-1',
    tenant: 'acme',
    user: 'alice',
    target: topicArn('o'),
    payload: 'p',
    payloadKept: 'record',
    dueAt: NOW + CUTOFF_MS + 1,
    version: 1,
    state: EVENT_STATE.queued,
    createdAt: NOW - 1000,
    expiresAt: 0,
    ...overrides,
  });
  const asked = (action: 'cancel' | 'reschedule' = 'cancel') => ({ tenant: 'acme', action, now: NOW, cutoffMs: CUTOFF_MS });

  it('EVENT_NOT_FOUND for no event, and for another tenant’s event alike', () => {
    expect(changeRefusal(undefined, asked())?.reason).toBe(REASON.EVENT_NOT_FOUND);
    expect(changeRefusal(record({ tenant: 'globex' }), asked())).toEqual(changeRefusal(undefined, asked()));
  });

  it.each([EVENT_STATE.emitted, EVENT_STATE.failed, EVENT_STATE.cancelled])('EVENT_ALREADY_ENDED for an event %s', (state) => {
    expect(changeRefusal(record({ state }), asked())).toEqual({
      reason: REASON.EVENT_ALREADY_ENDED,
      explanation: `it has already ended: ${state}`,
      details: { state },
    });
  });

  it('EVENT_EMITTING for an event due within the cutoff', () => {
    expect(changeRefusal(record({ dueAt: NOW + CUTOFF_MS }), asked())?.reason).toBe(REASON.EVENT_EMITTING);
  });

  it('nothing for a held event, however overdue: it waits for its tenant to resume, and may be cancelled or moved meanwhile', () => {
    const held = record({ state: EVENT_STATE.held, dueAt: NOW - 3_600_000 });
    expect(changeRefusal(held, asked('reschedule'))).toBeUndefined();
    expect(changeRefusal(held, asked('cancel'))).toBeUndefined();
  });

  it('nothing for a reschedule or cancel of an event whose payload only the delay queue holds: both apply', () => {
    const queued = record({ payload: undefined, payloadKept: 'queue' });
    expect(changeRefusal(queued, asked('reschedule'))).toBeUndefined();
    expect(changeRefusal(queued, asked('cancel'))).toBeUndefined();
  });

  it('nothing for an open event due after the cutoff: the change raced and is retried', () => {
    expect(changeRefusal(record(), asked('reschedule'))).toBeUndefined();
    expect(changeRefusal(record({ state: EVENT_STATE.scheduled }), asked())).toBeUndefined();
  });
});
