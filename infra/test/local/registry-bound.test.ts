import { DEFAULTS, DynamoDbTenantRegistry, REASON, registryChanges, systemClock, type TenantsDocument } from '@adhoc-scheduler/shared';
import { describe, expect, it } from 'vitest';
import { EVENT_SOURCES } from '../../src/queues.js';
import { LOCAL_ACCOUNT } from '../../src/local/runtime.js';
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

/**
 * The registry as data, read through the functions' cache: a change written to the table is in
 * force within the cache's bound (SCHEDULER_REGISTRY_MAX_AGE_MS, its default here), whatever the
 * functions read of it before.
 */
const emulators = sharedEmulators();

const REGISTERED: TenantsDocument = { tenants: [{ id: 'acme', accounts: [LOCAL_ACCOUNT] }] };

describe('the registry read through a cache', () => {
  it('refuses a tenant removed from the table within the bound, though ingest had read it as registered', async () => {
    const { logger, lines } = capturingLogger();
    const env = { ...FAST_TIMINGS, SCHEDULER_REGISTRY_MAX_AGE_MS: String(DEFAULTS.registryMaxAgeMs) };
    const scheduler = await startTestScheduler(emulators, { logger, tenants: REGISTERED, env });
    const acme = new SchedulerClient(scheduler, scheduler.outputs.tenantInputTopicArns.acme);
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    try {
      await acme.publish(request(target.topicArn, Date.now(), 'read as registered'));
      await waitFor(() => target.withPayload('read as registered').length > 0, 'the first delivery');

      await new DynamoDbTenantRegistry(scheduler.clients.dynamodb, scheduler.outputs.tableName, systemClock).write(
        registryChanges(REGISTERED, {}),
      );
      // A request published once the bound and ingest's batching window have passed since the write.
      const removedAt = Date.now();
      const inForceAt = removedAt + DEFAULTS.registryMaxAgeMs + EVENT_SOURCES.ingest.batchingWindowSeconds * 1000;
      await waitFor(() => Date.now() >= inForceAt, 'the bound passed', DEFAULTS.registryMaxAgeMs + 5_000);
      const messageId = await acme.publish(request(target.topicArn, Date.now() + 1_000, 'after the bound'));
      await waitFor(
        () => lines.find((line) => line.reason === REASON.UNKNOWN_TENANT && line.inputMessageId === messageId),
        'the request refused as from no tenant',
      );
      expect(target.withPayload('after the bound')).toHaveLength(0);
    } finally {
      acme.destroy();
      await target.stop();
      await scheduler.stop();
    }
  });
});
