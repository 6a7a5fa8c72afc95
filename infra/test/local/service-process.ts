import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { LocalOutputs } from '../../src/local/runtime.js';
import { waitFor } from './kit.js';

/** scripts/start's entry point. */
const LOCAL_SERVICE_ENTRY = resolve(import.meta.dirname, '../../src/start.ts');
const TSX = import.meta.resolve('tsx');

/** The local service in a process of its own, as scripts/start runs it. */
export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly outputsFile: string;
  readonly tenantsFile: string;
  /** Resolves with the exit code once the process has ended. */
  readonly exited: Promise<number | null>;
  /** What it wrote so far: JSON log lines on stdout, the banner and messages on stderr. */
  stdout(): string;
  stderr(): string;
}

/**
 * Starts the service as a user does, on ports the system picks (a developer's running service is
 * not in the way) and with `dir` as its working directory and the home of its outputs and tenants
 * files: nothing it reads or writes is a file a user keeps in the checkout.
 */
export function spawnService(
  dir: string,
  options: {
    readonly args?: readonly string[];
    readonly env?: Readonly<Record<string, string>>;
    /** Another entry point taking scripts/start's options (a service with a fault built in); scripts/start's by default. */
    readonly entry?: string;
  } = {},
): ServiceProcess {
  const outputsFile = join(dir, 'outputs.json');
  const tenantsFile = join(dir, 'tenants.json');
  const args = [
    '--import',
    TSX,
    options.entry ?? LOCAL_SERVICE_ENTRY,
    '--port',
    '0',
    '--dynamodb-port',
    '0',
    '--console-port',
    '0',
    '--outputs',
    outputsFile,
    '--tenants',
    tenantsFile,
    ...(options.args ?? []),
  ];
  const child = spawn(process.execPath, args, { cwd: dir, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, outputsFile, tenantsFile, exited, stdout: () => stdout, stderr: () => stderr };
}

/** The outputs, once the service has written them (it does once it is ready). */
export async function outputsOf(service: ServiceProcess): Promise<LocalOutputs> {
  const text = await waitFor(
    async () => {
      if (service.child.exitCode !== null) throw new Error(`the service exited (${service.child.exitCode}): ${service.stderr()}`);
      return readFile(service.outputsFile, 'utf8').catch(() => undefined);
    },
    'the service to start',
    60_000,
  );
  return JSON.parse(text) as LocalOutputs;
}
