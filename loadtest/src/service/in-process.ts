import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { LOCAL_CREDENTIALS, startLocalScheduler } from '@adhoc-scheduler/infra';
import { createLogger, ENV } from '@adhoc-scheduler/shared';
import { assertLoopback, type SchedulerService } from './connection.js';
import type { LocalServiceOptions } from './local-options.js';
import { ServiceProbe } from './probe.js';

/**
 * Starts the local scheduler in the harness's own process: one event loop for both, so the
 * harness's work can delay the emitter. Kept to measure exactly that, and for tests.
 */
export async function startInProcessService(options: LocalServiceOptions): Promise<SchedulerService> {
  const probe = new ServiceProbe();
  const log = createWriteStream(options.logFile, { flags: 'a' });
  const scheduler = await startLocalScheduler({
    env: options.env,
    tenants: options.tenants,
    ...(options.emitterConcurrency === undefined ? {} : { emitterConcurrency: options.emitterConcurrency }),
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    logger: createLogger(options.env[ENV.logLevel] ?? 'info', { destination: log }),
    instrumentClients: probe.instrumentClients,
    onInvocation: probe.onInvocation,
  });
  probe.watchQueues(scheduler.outputs);
  const { outputs, config } = scheduler;
  assertLoopback(outputs.endpoint, 'the SNS/SQS endpoint');
  assertLoopback(outputs.dynamodbEndpoint, 'the DynamoDB endpoint');
  return {
    mode: 'in-process',
    access: {
      region: outputs.region,
      endpoint: outputs.endpoint,
      dynamodbEndpoint: outputs.dynamodbEndpoint,
      credentials: LOCAL_CREDENTIALS,
      profile: undefined,
    },
    inputTopicArn: outputs.inputTopicArn,
    emitterRoleArn: outputs.emitterRoleArn,
    local: { config, outputs },
    report: async (withTimeline) => probe.report(withTimeline),
    async stop() {
      await scheduler.stop();
      log.end();
      await once(log, 'close');
    },
  };
}
