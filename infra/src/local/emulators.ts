/**
 * Starts the two real emulators the local runtime and the integration tests run on: DynamoDB
 * Local (Java) and fauxqs (SNS/SQS, in its own Node process). Both bind 127.0.0.1 on a port the
 * system picks, so any number of them can run side by side.
 *
 * Each child holds the read end of a pipe from this process on its stdin and exits when it
 * closes. The kernel closes it when this process ends in any way, SIGKILL included, so the
 * emulators never outlive their parent.
 */
import { spawn, spawnSync, type ChildProcessByStdio } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export interface Emulators {
  readonly dynamodbEndpoint: string;
  readonly messagingEndpoint: string;
  stop(): Promise<void>;
}

export class EmulatorStartError extends Error {
  override readonly name = 'EmulatorStartError';
}

const LOCAL_SOURCES = dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = join(LOCAL_SOURCES, '..', '..', '..');
const DYNAMODB_LOCAL_DIR = join(REPO_ROOT, '.local', 'dynamodb-local');
const DYNAMODB_LOCAL_JAR = join(DYNAMODB_LOCAL_DIR, 'DynamoDBLocal.jar');
const LOOPBACK_LAUNCHER_SOURCE = join(LOCAL_SOURCES, 'LoopbackDynamoDBLocal.java');
const LOOPBACK_LAUNCHER_CLASS = 'LoopbackDynamoDBLocal';
const FAUXQS_SERVER = join(LOCAL_SOURCES, 'fauxqs-server.ts');

const STARTUP_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;
/** How much of a child's output is kept to explain a failure. */
const OUTPUT_TAIL_CHARS = 16_000;

/** With a dataDir, tables, queues, topics and messages survive a restart (even a SIGKILL). */
export async function startEmulators(options: { dataDir?: string }): Promise<Emulators> {
  const dynamodbArgs = options.dataDir ? ['-dbPath', dataSubdir(options.dataDir, 'dynamodb')] : ['-inMemory'];
  const fauxqsArgs = options.dataDir ? [dataSubdir(options.dataDir, 'fauxqs')] : [];
  const started = await Promise.allSettled([startDynamoDbLocal(dynamodbArgs), startFauxqs(fauxqsArgs)]);
  const [dynamodb, fauxqs] = started;
  if (dynamodb.status === 'fulfilled' && fauxqs.status === 'fulfilled') return running(dynamodb.value, fauxqs.value);
  await Promise.all(started.map((result) => (result.status === 'fulfilled' ? result.value.stop() : undefined)));
  throw started.find((result): result is PromiseRejectedResult => result.status === 'rejected')?.reason;
}

function running(dynamodb: ChildServer, fauxqs: ChildServer): Emulators {
  const killOnExit = (): void => {
    dynamodb.kill();
    fauxqs.kill();
  };
  process.on('exit', killOnExit);
  return {
    dynamodbEndpoint: dynamodb.endpoint,
    messagingEndpoint: fauxqs.endpoint,
    async stop() {
      process.off('exit', killOnExit);
      await Promise.all([dynamodb.stop(), fauxqs.stop()]);
    },
  };
}

function dataSubdir(dataDir: string, name: string): string {
  const path = join(dataDir, name);
  mkdirSync(path, { recursive: true });
  return path;
}

async function startDynamoDbLocal(storageArgs: readonly string[]): Promise<ChildServer> {
  if (!existsSync(DYNAMODB_LOCAL_JAR)) {
    throw new EmulatorStartError(`DynamoDB Local is not installed (no ${DYNAMODB_LOCAL_JAR}); run scripts/bootstrap.sh`);
  }
  const classDir = compiledLoopbackLauncher();
  const classPath = [classDir, DYNAMODB_LOCAL_JAR].join(':');
  return startChildServer(
    'DynamoDB Local',
    'java',
    [
      `-Djava.library.path=${join(DYNAMODB_LOCAL_DIR, 'DynamoDBLocal_lib')}`,
      '-cp',
      classPath,
      LOOPBACK_LAUNCHER_CLASS,
      ...storageArgs,
      '-sharedDb',
      '-disableTelemetry',
    ],
    DYNAMODB_LOCAL_DIR,
  );
}

/**
 * Compiles the loopback launcher once per version of its source into the DynamoDB Local
 * directory (the source-file launcher would recompile it on every start, about a second).
 */
function compiledLoopbackLauncher(): string {
  const source = readFileSync(LOOPBACK_LAUNCHER_SOURCE);
  const version = createHash('sha256').update(source).digest('hex').slice(0, 16);
  const classDir = join(DYNAMODB_LOCAL_DIR, `loopback-launcher-${version}`);
  if (existsSync(join(classDir, `${LOOPBACK_LAUNCHER_CLASS}.class`))) return classDir;

  // Compiled aside and renamed into place, so concurrent starts never see a half-written class.
  const buildDir = mkdtempSync(join(DYNAMODB_LOCAL_DIR, 'loopback-build-'));
  try {
    const javac = spawnSync(
      'java',
      ['-m', 'jdk.compiler/com.sun.tools.javac.Main', '-cp', DYNAMODB_LOCAL_JAR, '-d', buildDir, LOOPBACK_LAUNCHER_SOURCE],
      { encoding: 'utf8' },
    );
    if (javac.error || javac.status !== 0) {
      throw new EmulatorStartError(
        `could not compile ${LOOPBACK_LAUNCHER_SOURCE} (is Java 17+ with the jdk.compiler module installed? scripts/bootstrap.sh checks): ` +
          (javac.error?.message ?? `${javac.stdout}${javac.stderr}`),
        { cause: javac.error },
      );
    }
    try {
      renameSync(buildDir, classDir);
    } catch (error) {
      // Another start compiled the same source first; its copy is as good as this one.
      if (!existsSync(classDir)) throw error;
    }
  } finally {
    rmSync(buildDir, { recursive: true, force: true });
  }
  return classDir;
}

function startFauxqs(storageArgs: readonly string[]): Promise<ChildServer> {
  // The child runs on the same Node binary (Node 24 under pnpm and vitest) with tsx for TypeScript;
  // its cwd lets `--import tsx` resolve from the workspace.
  return startChildServer('fauxqs', process.execPath, ['--import', 'tsx', FAUXQS_SERVER, ...storageArgs], LOCAL_SOURCES);
}

interface ChildServer {
  readonly endpoint: string;
  /** Ends the server and waits for it: SIGTERM, then SIGKILL if it lingers. */
  stop(): Promise<void>;
  /** Kills the server at once (for process exit, where nothing can be awaited). */
  kill(): void;
}

type ServerProcess = ChildProcessByStdio<Writable, Readable, Readable>;

/**
 * Spawns a server that prints {"listening":{"host","port"}} on stdout when it accepts requests,
 * and resolves then. Rejects with the server's output if it exits, fails to spawn or stays
 * silent for STARTUP_TIMEOUT_MS.
 */
function startChildServer(name: string, command: string, args: readonly string[], cwd: string): Promise<ChildServer> {
  return new Promise((resolve, reject) => {
    // Detached into its own process group, so a Ctrl-C in the terminal reaches only the parent,
    // which then stops its emulators in order instead of losing them mid-shutdown.
    const child: ServerProcess = spawn(command, args, { cwd, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    const remember = (text: string): void => {
      output = (output + text).slice(-OUTPUT_TAIL_CHARS);
    };
    const describe = (what: string): string => `${name} ${what}${output ? `\n--- ${name} output ---\n${output}` : ''}`;

    let state: 'starting' | 'running' | 'stopping' | 'failed' = 'starting';
    const failStart = (reason: string, cause?: unknown): void => {
      if (state !== 'starting') return;
      state = 'failed';
      clearTimeout(startupTimer);
      child.kill('SIGKILL');
      const notInstalled = (cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
      const hint = notInstalled ? ` (is ${command} installed? run scripts/bootstrap.sh)` : '';
      reject(new EmulatorStartError(describe(`did not start: ${reason}${hint}`), { cause }));
    };
    const startupTimer = setTimeout(() => failStart(`no answer within ${STARTUP_TIMEOUT_MS / 1000} s`), STARTUP_TIMEOUT_MS);

    child.on('error', (error) => failStart(error.message, error));
    child.on('exit', (code, signal) => {
      const how = signal ? `signal ${signal}` : `code ${code}`;
      if (state === 'starting') failStart(`exited with ${how}`);
      else if (state === 'running') process.stderr.write(`${describe(`exited unexpectedly with ${how}`)}\n`);
    });
    // A parent that dies first closes this pipe; the child is meant to notice, not this process.
    child.stdin.on('error', () => undefined);
    child.stderr.setEncoding('utf8').on('data', remember);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const port = listeningPort(line);
      if (port === undefined || state !== 'starting') {
        remember(`${line}\n`);
        return;
      }
      state = 'running';
      clearTimeout(startupTimer);
      resolve({
        endpoint: `http://127.0.0.1:${port}`,
        kill: () => {
          state = 'stopping';
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        },
        stop: async () => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          state = 'stopping';
          const exited = new Promise((done) => child.once('exit', done));
          child.kill('SIGTERM');
          const forceTimer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
          await exited;
          clearTimeout(forceTimer);
        },
      });
    });
  });
}

function listeningPort(line: string): number | undefined {
  if (!line.startsWith('{"listening"')) return undefined;
  try {
    const port: unknown = (JSON.parse(line) as { listening?: { port?: unknown } }).listening?.port;
    return typeof port === 'number' && Number.isInteger(port) && port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}
