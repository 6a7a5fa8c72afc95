import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENV } from '@adhoc-scheduler/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKills } from '../src/chaos/kills.js';
import { createConsumerEndpoint, deleteConsumerEndpoint, receiptOf, startConsumer } from '../src/consumer.js';
import { planUniform, scheduleRequest } from '../src/plan.js';
import { pollUntil } from '../src/poll.js';
import { publishEvents } from '../src/publisher.js';
import { LOAD_TEST_QUOTAS } from '../src/scenarios/scenario.js';
import { harnessClients } from '../src/service/connection.js';
import { startCrashableService, type CrashableService } from '../src/service/crashable.js';
import { DeliveryTracker } from '../src/tracker.js';

let dir: string;
let service: CrashableService;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'chaos-kill-'));
  service = await startCrashableService({
    env: {
      [ENV.nearPathWindowSeconds]: '20',
      [ENV.loaderIntervalSeconds]: '1',
      [ENV.loaderLookaheadSeconds]: '4',
      [ENV.logLevel]: 'warn',
    },
    emitterConcurrency: undefined,
    tenants: { public: LOAD_TEST_QUOTAS },
    dataDir: join(dir, 'data'),
    removeDataDirOnStop: true,
    logFile: join(dir, 'service.log'),
    namePrefix: 'chaos-kill',
    faults: { probability: 0, seed: 1, logFile: join(dir, 'faults.jsonl'), idPattern: 'c-[0-9a-f]{40}' },
  });
}, 60_000);

afterAll(async () => {
  await service?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("the chaos harness's kills, on the real local service", () => {
  it('kills the service with kill -9 once and starts it again on its data: every event delivered, none early, none twice', async () => {
    const clients = harnessClients(service.access);
    const target = await createConsumerEndpoint(clients.sns, clients.sqs, `kill-target-${Date.now()}`, service.emitterRoleArn, 5);
    const now = Date.now();
    // Due after the restart, in the delay queue (the window is 20 s) when the kill comes.
    const events = planUniform({
      runId: 'chaos-kill',
      user: 'chaos-kill',
      count: 5,
      firstDueAt: now + 12_000,
      spreadMs: 2_000,
      publishAheadMs: undefined,
      publishFrom: now,
    });
    const tracker = new DeliveryTracker(60_000);
    for (const event of events) tracker.expect(event.eventId, event.dueAt);
    const consumer = startConsumer(clients.sqs, target.queueUrl, 2, (message, receivedAt) =>
      tracker.record(receiptOf(message, receivedAt)),
    );
    try {
      const published = await publishEvents(events, {
        sns: clients.sns,
        inputTopicArn: service.inputTopicArn,
        render: (event) => scheduleRequest(event, 'chaos-kill', target.topicArn, 50, undefined),
        concurrency: 1,
        onPublished: () => undefined,
        onFailed: () => undefined,
        untilAccepted: true,
      });
      expect(published.published).toBe(5);

      const kills = await runKills(service, [{ at: Date.now() + 1_000, atSpike: false }], {
        minUptimeMs: 0,
        deadline: now + 10_000,
      });
      expect(kills).toHaveLength(1);

      expect(
        await pollUntil(() => tracker.accountedFor >= tracker.expected, Date.now() + 60_000),
        JSON.stringify({ counts: tracker.counts(), kills }),
      ).toBe(true);
      expect(tracker.counts()).toMatchObject({ expected: 5, delivered: 5, missing: 0, duplicated: 0, early: 0, earlyPublished: 0 });
    } finally {
      await consumer.stop();
      await deleteConsumerEndpoint(clients.sns, clients.sqs, target);
      clients.destroy();
    }
  }, 90_000);
});
