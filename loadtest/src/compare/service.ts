import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TenantsDocument } from '@adhoc-scheduler/shared';
import { descendantsOf, processTable, signalGroup, stillRunning } from './processes.js';
import type { StopReport } from './report.js';

/** How long a service may take to write its outputs file: DynamoDB Local and the first compile of a tree take a while. */
const READY_TIMEOUT_MS = 180_000;
/** How long a service may take to stop after SIGINT before it is killed: older trees wait out their long polls (20 s). */
const STOP_TIMEOUT_MS = 60_000;
/** How long its emulators may outlive it before they are killed and reported. */
const EMULATOR_EXIT_TIMEOUT_MS = 10_000;

/** Whether a tree's local service takes --console-port: its usage text names the option (older trees have no console). */
export function takesConsolePort(mainSource: string): boolean {
  return /--console-port\b/.test(mainSource);
}

/** The operator CLI's usage text in a tree: what commands that version has. */
const ADMIN_USAGE = join('infra', 'src', 'admin', 'usage.ts');

/**
 * Whether a tree's operator CLI has `tenant import`, the way --registered-tenants registers
 * tenants on a running service: a version before it gets no such tenants, and neither does the
 * side it is compared with.
 */
export function takesTenantImport(tree: string): boolean {
  const usage = join(tree, ADMIN_USAGE);
  return existsSync(usage) && /scripts\/admin tenant import FILE/.test(readFileSync(usage, 'utf8'));
}

/**
 * The tenants every run of a comparison registers before its load (--registered-tenants): as
 * asked when the base has tenant import; else none on either side, and why.
 */
export function registeredTenantsForBoth(
  asked: number | undefined,
  baseTree: string,
): { readonly count: number | undefined; readonly leftOut: string | undefined } {
  if (asked === undefined || takesTenantImport(baseTree)) return { count: asked, leftOut: undefined };
  return { count: undefined, leftOut: 'left out on both sides: the base has no tenant import' };
}

/** The file `pnpm start` runs in a tree: infra/src/start.ts, or infra/src/local/main.ts in trees before it moved. */
function startSource(tree: string): string {
  const current = join(tree, 'infra', 'src', 'start.ts');
  return existsSync(current) ? current : join(tree, 'infra', 'src', 'local', 'main.ts');
}

export interface StartFiles {
  readonly outputs: string;
  readonly tenants: string;
  /** Undefined: state in memory. */
  readonly dataDir: string | undefined;
}

/** `pnpm start`'s arguments: every port picked by the system, so that nothing else on the machine is in the way. */
export function startArgs(files: StartFiles, consolePort: boolean): string[] {
  return [
    '--silent',
    'start',
    '--port',
    '0',
    '--dynamodb-port',
    '0',
    ...(consolePort ? ['--console-port', '0'] : []),
    '--outputs',
    files.outputs,
    '--tenants',
    files.tenants,
    ...(files.dataDir === undefined ? ['--in-memory'] : ['--data-dir', files.dataDir]),
  ];
}

export interface SideService {
  readonly outputsFile: string;
  /** The registry it reads (its --tenants), which it re-reads as it changes. */
  readonly tenantsFile: string;
  stop(): Promise<StopReport>;
}

export interface SideServiceOptions {
  readonly tree: string;
  /** A fresh directory for the outputs, the tenants and the state. */
  readonly workDir: string;
  readonly inMemory: boolean;
  /** Settings by environment variable, as an operator gives them. */
  readonly env: Readonly<Record<string, string>>;
  readonly tenants: TenantsDocument;
  readonly logFile: string;
}

/** The tenants file's schema in a tree: what settings that version's registry knows. */
const TENANTS_SCHEMA = join('shared', 'schema', 'tenants.schema.json');

interface ObjectSchema {
  readonly properties?: Readonly<Record<string, unknown>>;
  readonly items?: ObjectSchema;
}

/**
 * The run's tenants as a version knows them: a setting its registry's schema does not name (one
 * added since) is left out, so the base takes the head's file, with that setting's default.
 */
export function knownSettings(tenants: TenantsDocument, tree: string): TenantsDocument {
  const schema = JSON.parse(readFileSync(join(tree, TENANTS_SCHEMA), 'utf8')) as { properties: Record<string, ObjectSchema> };
  const keep = (entry: object, known: ObjectSchema | undefined): Record<string, unknown> =>
    Object.fromEntries(Object.entries(entry).filter(([name]) => known?.properties?.[name] !== undefined));
  return {
    ...(tenants.public === undefined ? {} : { public: keep(tenants.public, schema.properties.public) }),
    ...(tenants.tenants === undefined ? {} : { tenants: tenants.tenants.map((entry) => keep(entry, schema.properties.tenants?.items)) }),
  } as TenantsDocument;
}

const tail = (file: string): string => readFileSync(file, 'utf8').split('\n').slice(-20).join('\n');

/**
 * Starts a tree's local service as scripts/start does once bootstrapped (`pnpm start`), in a
 * process group of its own, and waits for the outputs file it writes once ready.
 */
export async function startSideService(options: SideServiceOptions): Promise<SideService> {
  const files: StartFiles = {
    outputs: join(options.workDir, 'outputs.json'),
    tenants: join(options.workDir, 'tenants.json'),
    dataDir: options.inMemory ? undefined : join(options.workDir, 'data'),
  };
  await writeFile(files.tenants, `${JSON.stringify(knownSettings(options.tenants, options.tree), null, 2)}\n`);
  const consolePort = takesConsolePort(readFileSync(startSource(options.tree), 'utf8'));
  const log = openSync(options.logFile, 'a');
  const child = spawn('pnpm', startArgs(files, consolePort), {
    cwd: options.tree,
    detached: true,
    stdio: ['ignore', log, log],
    env: { ...process.env, ...options.env },
  });
  closeSync(log);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`pnpm start did not start in ${options.tree}`);
  let exited = false;
  const exit = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = true;
      resolve(signal ?? `exit code ${code}`);
    }),
  );

  const stop = async (): Promise<StopReport> => {
    const startedAt = Date.now();
    const processes = descendantsOf(processTable(), pid);
    // SIGINT to the script, which pnpm runs in a process group of its own: pnpm, signalled too, would end it before it
    // had stopped. The emulators, in groups of their own, are the service's to stop.
    const scriptGroups = new Set(processes.filter((row) => row.ppid === pid).map((row) => row.pgid));
    for (const group of scriptGroups) signalGroup(group, 'SIGINT');
    const stopped = await Promise.race([exit.then(() => true), sleep(STOP_TIMEOUT_MS).then(() => false)]);
    if (!stopped) {
      // pnpm has not exited, so its pid is still its own; a script group only while a process of it still runs as recorded.
      const live = new Set(stillRunning(processes, processTable()).map((row) => row.pgid));
      for (const group of [pid, ...[...scriptGroups].filter((group) => live.has(group))]) signalGroup(group, 'SIGKILL');
    }
    const ended = await exit;
    const waitUntil = Date.now() + EMULATOR_EXIT_TIMEOUT_MS;
    while (stillRunning(processes, processTable()).length > 0 && Date.now() < waitUntil) await sleep(250);
    const leftOver = stillRunning(processes, processTable());
    for (const row of leftOver) signalGroup(row.pgid, 'SIGKILL');
    return {
      seconds: Math.round((Date.now() - startedAt) / 100) / 10,
      exit: ended,
      leftOver: leftOver.map((row) => `${row.pid} ${row.command.slice(0, 80)}`),
    };
  };

  const readyBy = Date.now() + READY_TIMEOUT_MS;
  while (!existsSync(files.outputs)) {
    if (exited) throw new Error(`the service in ${options.tree} exited before it was ready:\n${tail(options.logFile)}`);
    if (Date.now() > readyBy) {
      await stop();
      throw new Error(
        `the service in ${options.tree} wrote no ${files.outputs} in ${READY_TIMEOUT_MS / 1000} s:\n${tail(options.logFile)}`,
      );
    }
    await sleep(250);
  }
  return { outputsFile: files.outputs, tenantsFile: files.tenants, stop };
}
