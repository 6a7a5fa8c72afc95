import { DEFAULT_QUOTAS, DEFAULTS, eventIdFor, parseInputMessage, REASON, TenantRegistry } from '@adhoc-scheduler/shared';
import { describe, expect, it } from 'vitest';
import { CANCEL_AHEAD_MS, CANCEL_EVERY, CANCEL_SPREAD_MS, planNeighbour, QUIET_TENANT, quietCancel } from '../src/scenarios/neighbour.js';
import { EXPECTED_REASONS, NoisyAnswers, noisyKind, noisyRequest, noticeOf, type NoisyKind } from '../src/scenarios/noisy-client.js';

const START = Date.UTC(2026, 11, 5, 9, 14, 42, 123);
const FAILURES = 'arn:aws:sns:us-east-1:000000000000:lt-x-noisy-failures';
const plan = planNeighbour({
  runId: 'lt-x',
  user: 'loadtest-x',
  noisyRequests: 2000,
  quietEvents: 1000,
  spreadMs: 60_000,
  aheadMs: 30_000,
  start: START,
});

/** The two tenants as the scenario registers them, at the default quotas, parsed by the scheduler's own validation. */
const registry = new TenantRegistry({ tenants: ['noisy', 'quiet'].map((id) => ({ id, accounts: ['000000000000'] })) }, 'scheduler');
function parse(text: string, id: string) {
  const tenant = registry.tenant(id);
  if (!tenant) throw new Error(`no tenant ${id}`);
  return parseInputMessage(text, '00000000-0000-4000-8000-000000000001', {
    tenant,
    region: 'us-east-1',
    partition: 'aws',
    schedulerTopics: { topicPrefix: 'scheduler', accountId: '000000000000', ownTopicArns: [] },
    now: START,
    maxScheduleAheadSeconds: DEFAULTS.maxScheduleAheadSeconds,
    defaultCatchUpSeconds: DEFAULTS.emitMaxAgeSeconds,
  });
}

describe("the neighbour scenario's plan", () => {
  it('floods at once: every noisy request published at the start, in a mix of 2 in 5 cancels, 2 in 5 reschedules, 1 in 10 naming the quiet tenant’s events and 1 in 10 invalid', () => {
    expect(new Set(plan.noisy.map((request) => request.publishAt))).toEqual(new Set([START]));
    const counts: Record<string, number> = {};
    for (const request of plan.noisy) counts[noisyKind(request.seq)] = (counts[noisyKind(request.seq)] ?? 0) + 1;
    expect(counts).toEqual({
      'cancel-unknown': 800,
      'reschedule-unknown': 800,
      'cancel-other-tenant': 200,
      'invalid-date': 100,
      'invalid-event-id': 100,
    });
  });

  it('sends requests the scheduler refuses as the scenario expects: valid ones counted in the quota, invalid ones in none, each naming its failure topic', () => {
    const quietIds = new Set(plan.quiet.map((event) => event.eventId));
    for (const request of plan.noisy.slice(0, 20)) {
      const kind: NoisyKind = noisyKind(request.seq);
      const parsed = parse(noisyRequest(request, FAILURES), 'noisy');
      expect(parsed.failureTopic).toBe(FAILURES);
      expect((parsed.input as { user?: string }).user).toBe(request.clientId);
      if (parsed.accepted) {
        expect(EXPECTED_REASONS[kind]).toEqual([REASON.EVENT_NOT_FOUND, REASON.QUOTA_EXCEEDED]);
        expect(parsed.request.kind).toBe(kind.startsWith('cancel') ? 'cancel' : 'reschedule');
        // Another tenant's event, named by its own id; or an id the noisy tenant never scheduled.
        const eventId = 'eventId' in parsed.request ? parsed.request.eventId : '';
        expect(quietIds.has(eventId)).toBe(kind === 'cancel-other-tenant');
        expect(eventId.startsWith('c-')).toBe(true);
      } else {
        expect(EXPECTED_REASONS[kind]).toEqual([parsed.error.reason]);
      }
    }
  });

  it('has the quiet tenant publish each event 30 s (and up to a second) before it is due, evenly over the span', () => {
    const schedules = plan.quiet.filter((event) => !plan.cancels.has(event));
    expect(schedules).toHaveLength(1000);
    for (const event of schedules) {
      expect(event.dueAt - event.publishAt).toBeGreaterThanOrEqual(Math.min(30_000, event.dueAt - START));
      expect(event.dueAt - event.publishAt).toBeLessThanOrEqual(31_000);
    }
    expect(Math.min(...schedules.map((event) => event.dueAt))).toBe(START + 30_000);
    expect(Math.max(...schedules.map((event) => event.dueAt))).toBeLessThan(START + 90_000);
    expect(plan.quiet.map((event) => event.publishAt)).toEqual([...plan.quiet.map((event) => event.publishAt)].sort((a, b) => a - b));
  });

  it('cancels every tenth quiet event 10 to 15 s before it is due, after its schedule request, by its id and user', () => {
    expect(plan.cancels.size).toBe(1000 / CANCEL_EVERY);
    expect(plan.expected).toHaveLength(1000 - 1000 / CANCEL_EVERY);
    const expectedIds = new Set(plan.expected.map((event) => event.eventId));
    const scheduleOf = new Map(plan.quiet.filter((event) => !plan.cancels.has(event)).map((event) => [event.eventId, event]));
    const aheads: number[] = [];
    for (const cancel of plan.cancels) {
      expect(expectedIds.has(cancel.eventId)).toBe(false);
      const schedule = scheduleOf.get(cancel.eventId);
      expect(schedule?.dueAt).toBe(cancel.dueAt);
      aheads.push(cancel.dueAt - cancel.publishAt);
      expect(cancel.publishAt - (schedule?.publishAt ?? 0)).toBeGreaterThanOrEqual(5000);
      const parsed = parse(quietCancel(cancel, 'loadtest-x', FAILURES), QUIET_TENANT);
      expect(parsed.accepted && parsed.request).toEqual({
        kind: 'cancel',
        eventId: eventIdFor(QUIET_TENANT, 'loadtest-x', cancel.clientId, ''),
      });
      expect(eventIdFor(QUIET_TENANT, 'loadtest-x', cancel.clientId, '')).toBe(cancel.eventId);
    }
    expect(Math.min(...aheads)).toBeGreaterThanOrEqual(CANCEL_AHEAD_MS);
    expect(Math.max(...aheads)).toBeLessThan(CANCEL_AHEAD_MS + CANCEL_SPREAD_MS);
    // Spread over the five seconds, not bunched at one end.
    expect(aheads.filter((ahead) => ahead < CANCEL_AHEAD_MS + CANCEL_SPREAD_MS / 2).length).toBeGreaterThan(40);
    expect(aheads.filter((ahead) => ahead >= CANCEL_AHEAD_MS + CANCEL_SPREAD_MS / 2).length).toBeGreaterThan(40);
  });

  it('refuses an --ahead too short for a cancel to follow its schedule request', () => {
    expect(() =>
      planNeighbour({ runId: 'r', user: 'u', noisyRequests: 1, quietEvents: 10, spreadMs: 1000, aheadMs: 19_000, start: START }),
    ).toThrow(/at least 20 s ahead/);
  });
});

describe("the noisy tenant's answers", () => {
  const notice = (request: Record<string, unknown>, reason: string, failedAt: number) =>
    noticeOf(JSON.stringify({ reason, message: '…', event: request, failedAt: new Date(failedAt).toISOString() }));

  it('are matched to requests by the user they quote: unanswered, answered twice, taken per second', () => {
    const requests = plan.noisy.slice(0, 4);
    const answers = new NoisyAnswers(new Map(requests.map((request) => [request.clientId, noisyKind(request.seq)])));
    const [first, second, third] = requests.map((request) => JSON.parse(noisyRequest(request, FAILURES)) as Record<string, unknown>);
    answers.record(notice(first ?? {}, REASON.EVENT_NOT_FOUND, START + 100), START + 200);
    // The same second as the first (START is .123 into its second).
    answers.record(notice(second ?? {}, REASON.EVENT_NOT_FOUND, START + 800), START + 950);
    answers.record(notice(third ?? {}, REASON.QUOTA_EXCEEDED, START + 1500), START + 1600);
    answers.record(notice(third ?? {}, REASON.QUOTA_EXCEEDED, START + 1500), START + 1700);
    answers.record(notice({ action: 'cancel', id: 'x', user: 'someone else' }, REASON.EVENT_NOT_FOUND, START), START);
    expect(answers.summary()).toMatchObject({
      requests: 4,
      notices: 4,
      answered: 3,
      unanswered: 1,
      answeredMoreThanOnce: 1,
      byReason: { [REASON.EVENT_NOT_FOUND]: 2, [REASON.QUOTA_EXCEEDED]: 2 },
      takenMostInOneSecond: 2,
      noticesOfNoRequest: 1,
      unexpectedReasons: [],
    });
    expect(answers.lastAt).toBe(START + 1700);
    expect(DEFAULT_QUOTAS.maxControlPerSecond).toBe(1000);
  });
});
