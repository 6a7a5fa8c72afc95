/** What the tests of cancels and reschedules share: a scheduler with two tenants, and ways to wait on an event's state. */
import { expect } from 'vitest';
import { DynamoDbEventListing, EVENT_STATE, type EventRecord, type EventState, type TenantsDocument } from '@adhoc-scheduler/shared';
import { LOCAL_ACCOUNT, type LocalSchedulerOptions } from '../../src/local/runtime.js';
import {
  capturingLogger,
  FAST_TIMINGS,
  request,
  SchedulerClient,
  sharedEmulators,
  startTestScheduler,
  TopicConsumer,
  waitFor,
} from './kit.js';

/** Two tenants whose targets are local topics; no tenant owns the local account, so the public tenant may target it too. */
export const TENANTS: TenantsDocument = {
  tenants: [
    { id: 'acme', accounts: ['111111111111'], targetAccounts: [LOCAL_ACCOUNT] },
    { id: 'globex', accounts: ['222222222222'], targetAccounts: [LOCAL_ACCOUNT] },
  ],
};

const emulators = sharedEmulators();

/** Events due sooner than this go straight to the delay queue; later ones are stored. */
export const NEAR_PATH_WINDOW_MS = 10_000;

/**
 * A scheduler with two tenants in the local account, changes closing 4 s before due (FAST_TIMINGS), a target and a failure topic;
 * events due within `nearPathWindowMs` go straight to the delay queue.
 */
export async function startTwoTenants(
  options: Pick<LocalSchedulerOptions, 'instrumentClients' | 'visibilityTimeoutSeconds'> = {},
  nearPathWindowMs = NEAR_PATH_WINDOW_MS,
) {
  const { logger, lines } = capturingLogger();
  const timings = { ...FAST_TIMINGS, SCHEDULER_NEAR_PATH_WINDOW_SECONDS: String(nearPathWindowMs / 1000) };
  const scheduler = await startTestScheduler(emulators, { logger, tenants: TENANTS, env: timings, ...options });
  const acme = new SchedulerClient(scheduler, scheduler.outputs.tenantInputTopicArns.acme);
  const globex = new SchedulerClient(scheduler, scheduler.outputs.tenantInputTopicArns.globex);
  const shared = new SchedulerClient(scheduler);
  const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
  const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'failures');
  const records = new DynamoDbEventListing(scheduler.clients.dynamodb, scheduler.outputs.tableName);
  const stop = async () => {
    acme.destroy();
    globex.destroy();
    shared.destroy();
    await target.stop();
    await failures.stop();
    await scheduler.stop();
  };
  return { acme, globex, shared, target, failures, records, lines, stop };
}

/** The tenant acme's first event in a state, if any. */
export async function firstIn(records: DynamoDbEventListing, state: EventState): Promise<EventRecord | undefined> {
  return (await records.listEvents('acme', { states: [state], limit: 1 })).events[0];
}

export async function inState(records: DynamoDbEventListing, id: string, state: string): Promise<EventRecord | undefined> {
  const record = await records.get(id);
  return record?.state === state ? record : undefined;
}

/** Publishes a sentinel due a second after `dueAt` and waits for it: whatever was due at `dueAt` has had its chance. */
export async function sentinelAfter(client: SchedulerClient, target: TopicConsumer, dueAt: number): Promise<void> {
  await client.publish(request(target.topicArn, Math.max(dueAt, Date.now()) + 1_000, 'sentinel'));
  await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel', 30_000);
}

/**
 * A wider near-path window than the other tests': an event due in 15 s goes to the delay queue,
 * and its reschedule has 11 s to land before the cutoff, however busy the machine.
 */
export const CARRY_WINDOW_MS = 20_000;
/** The two tenants with that window. */
export const startForCarry = (options: Parameters<typeof startTwoTenants>[0] = {}) => startTwoTenants(options, CARRY_WINDOW_MS);

/** Schedules a near-path event due in `inMs`, and reschedules it to `newInMs` from the same start; waits for the reschedule. */
export async function movedNear(context: Awaited<ReturnType<typeof startTwoTenants>>, payload: string, inMs: number, newInMs: number) {
  const { acme, target, records } = context;
  const start = Date.now();
  const dueAt = start + inMs;
  const newDueAt = start + newInMs;
  const id = `m-${await acme.publish(request(target.topicArn, dueAt, payload))}`;
  await waitFor(() => inState(records, id, EVENT_STATE.queued), 'the event');
  const messageId = await acme.publish({ action: 'reschedule', event_id: id, date: new Date(newDueAt).toISOString() });
  const moved = await waitFor(async () => {
    const record = await records.get(id);
    return record?.version === 2 && record;
  }, 'the reschedule');
  expect(moved).toMatchObject({ state: EVENT_STATE.queued, dueAt: newDueAt, payloadKept: 'queue', carriedBy: moved.queuedBy });
  return { id, dueAt, newDueAt, messageId };
}
