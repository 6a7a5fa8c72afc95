import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError } from '@adhoc-scheduler/shared';
import { LOCAL_SERVICE_FILES } from '@adhoc-scheduler/shared/local-service-access';
import { ConsolePortInUseError, serveConsole } from './console/serve.js';
import { DEFAULT_CONSOLE_PORT } from './console/server.js';
import { EmulatorStartError, PortInUseError, type EmulatorName } from './local/emulators.js';
import { removeOutputsFile, removeStaleOutputsFile, writeOutputsFile } from './local/outputs-file.js';
import { startLocalScheduler } from './local/runtime.js';
import { TenantsFileError } from './local/tenants-file.js';

/**
 * scripts/start (`pnpm start`): the local service (local/) and, beside it, its console (console/),
 * which reads the service through the outputs file as scripts/admin does.
 */

const USAGE = `Runs the scheduler on this machine against DynamoDB Local and fauxqs (127.0.0.1 only).

Usage: scripts/start [--data-dir DIR | --in-memory] [--port N] [--dynamodb-port N] [--console-port N]
                     [--outputs FILE] [--tenants FILE]

  --data-dir DIR       where both emulators keep their state (default .local/data); a restart,
                       even after kill -9, finds every scheduled event
  --in-memory          keep nothing on disk
  --port N             port of the SNS/SQS endpoint (default 4566); the endpoint stays the same
                       across restarts, so a configured client keeps working; 0 lets the system pick
  --dynamodb-port N    port of the DynamoDB endpoint (default 8000)
  --console-port N     port of the console in the browser (default ${DEFAULT_CONSOLE_PORT}; its URL is
                       consoleUrl in the outputs; see docs/operators/console.md)
  --outputs FILE       where to write what a client needs (default ${LOCAL_SERVICE_FILES.outputs}): written
                       once the service is ready, removed when it stops
  --tenants FILE       the tenant registry (default ${LOCAL_SERVICE_FILES.tenants}; absent at start: only
                       the shared input topic's public tenant); re-read when it changes (while it
                       is missing, the last registry stays in force), and written by
                       scripts/admin tenant add

Settings come from SCHEDULER_* environment variables (see docs/operators/configuration.md),
e.g. SCHEDULER_NEAR_PATH_WINDOW_SECONDS=20 SCHEDULER_LOADER_INTERVAL_SECONDS=5 for demos.

Exit codes: 0 stopped (Ctrl-C, SIGTERM), 1 could not start (the one line on stderr says why),
2 wrong command line.`;

/** What the operator can act on: one line on stderr, exit code 1. */
function exitWith(message: string): never {
  console.error(message);
  process.exit(1);
}

/** A wrong command line: one line naming the option, the help hint, exit code 2 (as scripts/admin). */
function wrongCommandLine(message: string): never {
  console.error(`${message} (scripts/start --help lists the options)`);
  process.exit(2);
}

function parseCommandLine() {
  try {
    return parseArgs({
      options: {
        'data-dir': { type: 'string' },
        'in-memory': { type: 'boolean', default: false },
        port: { type: 'string', default: '4566' },
        'dynamodb-port': { type: 'string', default: '8000' },
        'console-port': { type: 'string', default: String(DEFAULT_CONSOLE_PORT) },
        outputs: { type: 'string', default: LOCAL_SERVICE_FILES.outputs },
        tenants: { type: 'string', default: LOCAL_SERVICE_FILES.tenants },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values;
  } catch (error) {
    // node:util parseArgs refuses unknown options, missing values and positionals.
    return wrongCommandLine((error as Error).message);
  }
}

const values = parseCommandLine();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (values['in-memory'] && values['data-dir'] !== undefined)
  wrongCommandLine('--data-dir and --in-memory exclude each other: state is kept on disk or in memory');

const PORT_FLAGS: Readonly<Record<EmulatorName, string>> = { messaging: '--port', dynamodb: '--dynamodb-port' };

function portFlag(emulator: EmulatorName, text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65_535) wrongCommandLine(`${PORT_FLAGS[emulator]} takes a port from 0 to 65535, not ${text}`);
  return port;
}

const ports = { messaging: portFlag('messaging', values.port), dynamodb: portFlag('dynamodb', values['dynamodb-port']) };
if (ports.messaging !== 0 && ports.messaging === ports.dynamodb) {
  wrongCommandLine(`--port and --dynamodb-port need different ports (both are ${ports.messaging})`);
}
const consolePortText = values['console-port'];
const consolePort = Number(consolePortText);
if (!/^\d+$/.test(consolePortText) || consolePort > 65_535)
  wrongCommandLine(`--console-port takes a port from 0 to 65535, not ${consolePortText}`);
if (consolePort !== 0 && (consolePort === ports.messaging || consolePort === ports.dynamodb))
  wrongCommandLine(`--console-port needs a port of its own (${consolePort} is an emulator's)`);

/** What the operator can act on, in one line; anything else is a fault of the service and keeps its stack. */
function startFailure(error: unknown): string | undefined {
  if (error instanceof PortInUseError) {
    const flags = error.taken.map(({ emulator }) => `${PORT_FLAGS[emulator]} N`).join(' ');
    const other = error.taken.length > 1 ? 'other ports' : 'another port';
    return `${error.message}: is the scheduler already running? Stop it, or choose ${other} with ${flags}.`;
  }
  if (error instanceof TenantsFileError) return `${error.message}. Correct it, or name another file with --tenants FILE.`;
  if (error instanceof ConfigError) return `${error.message} (see docs/operators/configuration.md).`;
  if (error instanceof EmulatorStartError) return error.message;
  return undefined;
}

const outputsFile = resolve(values.outputs);
await removeStaleOutputsFile(outputsFile);
const dataDir = values['in-memory'] ? undefined : resolve(values['data-dir'] ?? '.local/data');
if (dataDir) await mkdir(dataDir, { recursive: true });
const scheduler = await startLocalScheduler({
  ...(dataDir ? { dataDir } : {}),
  // Fixed ports and names, so a restart keeps the endpoints, topic and queue URLs a client knows.
  ports,
  namePrefix: 'adhoc-scheduler',
  // As given (relative to the repository root, where scripts/start runs), so messages name it as the operator does.
  tenants: { file: values.tenants },
  env: process.env,
}).catch((error: unknown) => {
  const failure = startFailure(error);
  if (failure === undefined) throw error;
  return exitWith(failure);
});

// The console reads the service as scripts/admin does, through the outputs file written below.
const consoleServer = await serveConsole({ kind: 'local', outputs: outputsFile }, { tenantsFile: values.tenants, port: consolePort }).catch(
  async (error: unknown) => {
    await scheduler.stop();
    if (error instanceof ConsolePortInUseError)
      return exitWith(
        `port ${consolePort} of the console is in use: is the scheduler already running? Stop it, or choose another with --console-port N.`,
      );
    throw error;
  },
);

// Written once the service answers, and whole: a script waits for the file, then uses it.
await writeOutputsFile(outputsFile, { ...scheduler.outputs, consoleUrl: consoleServer.url });
const { config } = scheduler;
console.error(
  [
    'Scheduler running locally.',
    `  endpoint (SNS, SQS)  ${scheduler.outputs.endpoint}  (--port)`,
    `  endpoint (DynamoDB)  ${scheduler.outputs.dynamodbEndpoint}  (--dynamodb-port)`,
    `  console              ${consoleServer.url}  (--console-port)`,
    `  region               ${scheduler.outputs.region}`,
    `  input topic          ${scheduler.outputs.inputTopicArn}  (public tenant)`,
    ...Object.entries(scheduler.outputs.tenantInputTopicArns).map(([id, arn]) => `  tenant ${id.padEnd(14)}${arn}`),
    `  tenants file         ${resolve(values.tenants)}`,
    `  emitter role         ${scheduler.outputs.emitterRoleArn}`,
    `  near-path window     ${config.nearPathWindowSeconds} s, loader every ${config.loaderIntervalSeconds} s`,
    `  state                ${dataDir ?? 'in memory'}`,
    `  outputs written to   ${outputsFile}`,
    'Stop with Ctrl-C.',
  ].join('\n'),
);

let stopping = false;
const shutdown = (reason: string): void => {
  if (stopping) return;
  stopping = true;
  // A loader tick or a batch already in hand finishes (and logs) before the service stops.
  console.error(`${reason}: stopping once the work in hand is done`);
  removeOutputsFile(outputsFile, scheduler.outputs.endpoint)
    .then(() => consoleServer.close())
    .then(() => scheduler.stop())
    .then(
      () => {
        console.error('Stopped.');
        process.exit(0);
      },
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
};
process.on('SIGINT', () => shutdown('SIGINT'));
process.on('SIGTERM', () => shutdown('SIGTERM'));
// Started by another process over an IPC channel (the quickstart's demo service): it stops when that process ends, however it ends.
if (process.channel) process.on('disconnect', () => shutdown('parent process ended'));
