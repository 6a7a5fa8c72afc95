import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENV } from '@adhoc-scheduler/shared/config';
import { answers } from '@adhoc-scheduler/shared/local-service-access';
import { localScheduler } from './scheduler-endpoint.js';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The entry point of scripts/start. */
const LOCAL_SERVICE_ENTRY = join(REPO_ROOT, 'infra', 'src', 'start.ts');

/**
 * The demo service's timings: events due more than 10 s ahead are stored and moved by a loader
 * that runs every 2 s, so the far event arrives within half a minute.
 */
export const DEMO_TIMINGS = { nearPathWindowSeconds: 10, loaderIntervalSeconds: 2 } as const;

const START_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 30_000;

export interface DemoService {
  /** Its outputs file, in a directory of its own. */
  readonly outputsFile: string;
  /** Stops it and removes its directory; what it held was in memory only. */
  stop(): Promise<void>;
}

/**
 * Starts a local service for one quickstart run: scripts/start's entry point, in memory, on
 * ports the system picks (so it never meets a service of the user's), with short timings. It
 * runs in its own process group, stopped by `stop()`, and stops by itself when this process
 * ends in any other way: it watches the IPC channel to this process, which the kernel closes.
 */
export async function startDemoService(): Promise<DemoService> {
  const dir = await mkdtemp(join(tmpdir(), 'quickstart-service-'));
  const outputsFile = join(dir, 'outputs.json');
  const args = [
    '--import',
    'tsx',
    LOCAL_SERVICE_ENTRY,
    '--in-memory',
    '--port',
    '0',
    '--dynamodb-port',
    '0',
    '--console-port',
    '0',
    '--outputs',
    outputsFile,
    '--tenants',
    join(dir, 'tenants.json'),
  ];
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      [ENV.nearPathWindowSeconds]: String(DEMO_TIMINGS.nearPathWindowSeconds),
      [ENV.loaderIntervalSeconds]: String(DEMO_TIMINGS.loaderIntervalSeconds),
      [ENV.logLevel]: 'error',
    },
    // Its logs (errors only: the invalid event's warning is the demo's point) go to this stderr; its own stderr is kept to say why it did not start.
    stdio: ['ignore', process.stderr, 'pipe', 'ipc'],
    detached: true,
  });
  let lastLine = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    lastLine = text.trim().split('\n').at(-1) ?? lastLine;
  });
  const exited = once(child, 'exit');
  let running = true;
  void exited.then(() => (running = false));

  const stop = async (): Promise<void> => {
    if (running) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (!running) {
      await stop();
      throw new Error(`the demo service did not start: ${lastLine || 'it exited'}`);
    }
    // scripts/start writes its outputs once ready; that its endpoint answers is checked all the same.
    const service = await localScheduler(outputsFile, (path) => readFile(path, 'utf8'));
    if (service !== undefined && (await answers(service.endpoint))) return { outputsFile, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the demo service did not start within ${START_TIMEOUT_MS / 1000} s${lastLine ? ` (last said: ${lastLine})` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
