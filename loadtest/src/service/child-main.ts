/**
 * The local scheduler in its own process, so that the harness's publishing and receiving never
 * delay the emitter's timers. Started by child.ts; talks to it over the IPC channel, and stops
 * when that channel closes (the harness ended, however it ended).
 */
import { startLocalScheduler, type LocalScheduler } from '@adhoc-scheduler/infra';
import { createLogger, ENV } from '@adhoc-scheduler/shared';
import { injectFaults, serviceFaultInjection } from '../chaos/faults.js';
import type { FromService, ToService } from './ipc.js';
import { ServiceProbe } from './probe.js';

const probe = new ServiceProbe();
let scheduler: LocalScheduler | undefined;

function send(message: FromService): void {
  process.send?.(message);
}

async function stop(): Promise<void> {
  await scheduler?.stop();
  scheduler = undefined;
}

process.on('message', (message: ToService) => {
  switch (message.type) {
    case 'start': {
      const { env, emitterConcurrency, dataDir, tenants, ports, namePrefix, faults } = message.options;
      startLocalScheduler({
        env,
        tenants,
        ...(emitterConcurrency === undefined ? {} : { emitterConcurrency }),
        ...(dataDir === undefined ? {} : { dataDir }),
        ...(ports === undefined ? {} : { ports }),
        ...(namePrefix === undefined ? {} : { namePrefix }),
        // stdout is the log file the harness opened.
        logger: createLogger(env[ENV.logLevel] ?? 'info'),
        instrumentClients: (clients) => {
          if (faults) injectFaults(clients, serviceFaultInjection(faults));
          probe.instrumentClients(clients);
        },
        onInvocation: probe.onInvocation,
      }).then(
        (started) => {
          scheduler = started;
          probe.watchQueues(started.outputs);
          send({ type: 'ready', outputs: started.outputs, config: started.config });
        },
        (error: unknown) => send({ type: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
      );
      return;
    }
    case 'report':
      send({ type: 'report', id: message.id, report: probe.report(message.withTimeline) });
      return;
    case 'stop':
      void stop().then(() => {
        send({ type: 'stopped' });
        process.disconnect();
      });
      return;
  }
});

process.on('disconnect', () => {
  void stop().finally(() => process.exit(0));
});
