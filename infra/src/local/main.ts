import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startLocalScheduler } from './runtime.js';

const USAGE = `Runs the scheduler on this machine against DynamoDB Local and fauxqs (127.0.0.1 only).

Usage: scripts/start [--data-dir DIR | --in-memory] [--outputs FILE]

  --data-dir DIR   where both emulators keep their state (default .local/data); a restart,
                   even after kill -9, finds every scheduled event
  --in-memory      keep nothing on disk
  --outputs FILE   where to write what a client needs (default .local/outputs.json)

Settings come from SCHEDULER_* environment variables (see the README's configuration table),
e.g. SCHEDULER_NEAR_PATH_WINDOW_SECONDS=20 SCHEDULER_LOADER_INTERVAL_SECONDS=5 for demos.`;

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string', default: '.local/data' },
    'in-memory': { type: 'boolean', default: false },
    outputs: { type: 'string', default: '.local/outputs.json' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

const dataDir = values['in-memory'] ? undefined : resolve(values['data-dir']);
if (dataDir) await mkdir(dataDir, { recursive: true });
const scheduler = await startLocalScheduler({
  ...(dataDir ? { dataDir } : {}),
  // Fixed names, so a restart on the same data directory finds the same topic and queues.
  namePrefix: 'adhoc-scheduler',
  env: process.env,
});

const outputsFile = resolve(values.outputs);
await mkdir(dirname(outputsFile), { recursive: true });
await writeFile(outputsFile, `${JSON.stringify(scheduler.outputs, null, 2)}\n`);
const { config } = scheduler;
console.error(
  [
    'Scheduler running locally.',
    `  endpoint (SNS, SQS)  ${scheduler.outputs.endpoint}`,
    `  region               ${scheduler.outputs.region}`,
    `  input topic          ${scheduler.outputs.inputTopicArn}`,
    `  emitter role         ${scheduler.outputs.emitterRoleArn}`,
    `  near-path window     ${config.nearPathWindowSeconds} s, loader every ${config.loaderIntervalSeconds} s`,
    `  state                ${dataDir ?? 'in memory'}`,
    `  outputs written to   ${outputsFile}`,
    'Stop with Ctrl-C.',
  ].join('\n'),
);

let stopping = false;
const shutdown = (signal: string): void => {
  if (stopping) return;
  stopping = true;
  console.error(`${signal}: stopping`);
  scheduler.stop().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
};
process.on('SIGINT', () => shutdown('SIGINT'));
process.on('SIGTERM', () => shutdown('SIGTERM'));
