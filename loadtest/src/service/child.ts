import { fork, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LOCAL_CREDENTIALS } from '@adhoc-scheduler/infra';
import { assertLoopback, type SchedulerService } from './connection.js';
import type { FromService, ToService } from './ipc.js';
import type { LocalServiceOptions } from './local-options.js';
import type { ServiceReport } from './probe.js';

const CHILD_MAIN = fileURLToPath(new URL('./child-main.ts', import.meta.url));
const START_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 30_000;

/** The local scheduler in a child process. */
export interface ChildService extends SchedulerService {
  /** kill -9 of the service process, as a crash would end it; resolves once it has exited (its emulators notice and exit on their own). */
  kill(): Promise<void>;
}

/**
 * Starts the local scheduler in a child process (same Node binary, TypeScript through tsx) and
 * connects to it. Its logs go to `options.logFile`.
 */
export async function startChildService(options: LocalServiceOptions): Promise<ChildService> {
  const log = openSync(options.logFile, 'a');
  let child: ChildProcess;
  try {
    child = fork(CHILD_MAIN, [], { execArgv: ['--import', import.meta.resolve('tsx')], stdio: ['ignore', log, log, 'ipc'] });
  } finally {
    closeSync(log);
  }

  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const send = (message: ToService): void => {
    child.send(message);
  };
  const nextMessage = <T extends FromService['type']>(
    type: T,
    timeoutMs: number,
    match: (m: Extract<FromService, { type: T }>) => boolean = () => true,
  ) =>
    new Promise<Extract<FromService, { type: T }>>((resolve, reject) => {
      const onMessage = (message: FromService): void => {
        if (message.type === 'failed')
          finish(() => reject(new Error(`the local service failed to start (log: ${options.logFile}):\n${message.error}`)));
        else if (message.type === type && match(message as Extract<FromService, { type: T }>))
          finish(() => resolve(message as Extract<FromService, { type: T }>));
      };
      const onExit = (): void => finish(() => reject(new Error(`the local service exited (log: ${options.logFile})`)));
      const timer = setTimeout(
        () => finish(() => reject(new Error(`no "${type}" from the local service within ${timeoutMs / 1000} s`))),
        timeoutMs,
      );
      const finish = (settle: () => void): void => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        settle();
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });

  const ready = nextMessage('ready', START_TIMEOUT_MS);
  const { logFile: _logFile, ...startOptions } = options;
  send({ type: 'start', options: startOptions });
  let started: Extract<FromService, { type: 'ready' }>;
  try {
    started = await ready;
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const { outputs, config } = started;
  assertLoopback(outputs.endpoint, 'the SNS/SQS endpoint');
  assertLoopback(outputs.dynamodbEndpoint, 'the DynamoDB endpoint');

  let reportId = 0;
  return {
    mode: 'child',
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
    async report(withTimeline): Promise<ServiceReport> {
      reportId += 1;
      const id = reportId;
      const reply = nextMessage('report', 30_000, (message) => message.id === id);
      send({ type: 'report', id, withTimeline });
      return (await reply).report;
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const stopped = nextMessage('stopped', STOP_TIMEOUT_MS).catch(() => undefined);
      send({ type: 'stop' });
      await stopped;
      const killTimer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killTimer);
    },
  };
}
