/**
 * Starts the two real emulators the local runtime and the integration tests run on: DynamoDB
 * Local (Java) and fauxqs (SNS/SQS, in its own Node process). Both bind 127.0.0.1: on fixed ports
 * for a service whose endpoints outlive a restart, or by default on ports the system picks, so
 * any number of them can run side by side. Both answer only signed requests from this machine,
 * never a browser's (emulator-access.ts).
 *
 * Each child holds the read end of a pipe from this process on its stdin and exits when it
 * closes. The kernel closes it when this process ends in any way, SIGKILL included, so the
 * emulators never outlive their parent.
 */
import { spawn, spawnSync, type ChildProcessByStdio } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer } from 'node:net';
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

/** Ports to bind on 127.0.0.1; 0 (the default) lets the system pick a free one. */
export interface EmulatorPorts {
  /** fauxqs: the SNS and SQS endpoint. */
  readonly messaging?: number;
  readonly dynamodb?: number;
}

export type EmulatorName = keyof EmulatorPorts;

const HOST = '127.0.0.1';
const EMULATOR_NAMES: Readonly<Record<EmulatorName, string>> = { messaging: 'fauxqs (SNS/SQS)', dynamodb: 'DynamoDB Local' };

export class EmulatorStartError extends Error {
  override readonly name: string = 'EmulatorStartError';
}

export interface TakenPort {
  readonly emulator: EmulatorName;
  readonly port: number;
}

/** A port asked for is held by another process (often a scheduler already running). */
export class PortInUseError extends EmulatorStartError {
  override readonly name = 'PortInUseError';

  constructor(readonly taken: readonly TakenPort[]) {
    super(taken.map(({ emulator, port }) => `port ${port} for ${EMULATOR_NAMES[emulator]} is already in use on ${HOST}`).join('; '));
  }
}

const LOCAL_SOURCES = dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = join(LOCAL_SOURCES, '..', '..', '..');
const DYNAMODB_LOCAL_DIR = join(REPO_ROOT, '.local', 'dynamodb-local');
const DYNAMODB_LOCAL_JAR = join(DYNAMODB_LOCAL_DIR, 'DynamoDBLocal.jar');
const LOOPBACK_LAUNCHER_SOURCE = join(LOCAL_SOURCES, 'LoopbackDynamoDBLocal.java');
const LOOPBACK_LAUNCHER_CLASS = 'LoopbackDynamoDBLocal';
const FAUXQS_SERVER = join(LOCAL_SOURCES, 'fauxqs-server.ts');

/**
 * How long a server may take to answer its first request. DynamoDB Local's JVM starts in about 3 s
 * on a quiet 2-core machine but in 18 s beside six busy processes and five other starts, and a
 * full test run on 2 cores has been seen past 30 s: a slow start is not a failed one.
 */
const STARTUP_TIMEOUT_MS = 90_000;
const STOP_GRACE_MS = 5_000;
/** How much of a child's output is kept to explain a failure. */
const OUTPUT_TAIL_CHARS = 16_000;

/**
 * DynamoDB Local's JIT compilers run at the lowest priority (nice 19) and every other thread of
 * its JVM at the normal one (0), run as root or not. On 2 cores, the C2 compiler took most of a
 * core in bursts through a run's first minute, and the emitter's timers and fauxqs waited for a
 * core behind it: steady's latest events and a spike's p99 (BENCHMARKS.md, 2026-12-06). At nice
 * 19 it compiles in the time nothing else wants. The compiler threads live as long as the JVM,
 * so each gets its priority once.
 */
const DYNAMODB_LOCAL_JVM_OPTIONS = [
  '-XX:ThreadPriorityPolicy=1',
  '-XX:CompilerThreadPriority=19',
  '-XX:-UseDynamicNumberOfCompilerThreads',
  // The policy maps Java priorities to nice values down to -5 when it may; all at 0 instead.
  ...Array.from({ length: 10 }, (_, index) => `-XX:JavaPriority${index + 1}_To_OSPriority=0`),
];

export interface EmulatorOptions {
  /** With a data directory, tables, queues, topics and messages survive a restart (even a SIGKILL). */
  readonly dataDir?: string;
  /** Fixed ports keep the endpoints the same across restarts. */
  readonly ports?: EmulatorPorts;
}

/** Fails with a PortInUseError, naming every taken port, when a port asked for is held. */
export async function startEmulators(options: EmulatorOptions): Promise<Emulators> {
  const taken = await takenPorts(options.ports ?? {});
  if (taken.length > 0) throw new PortInUseError(taken);
  const dynamodbArgs = options.dataDir ? ['-dbPath', dataSubdir(options.dataDir, 'dynamodb')] : ['-inMemory'];
  const fauxqsArgs = options.dataDir ? ['--data-dir', dataSubdir(options.dataDir, 'fauxqs')] : [];
  const started = await Promise.allSettled([
    startDynamoDbLocal(options.ports?.dynamodb ?? 0, dynamodbArgs),
    startFauxqs(options.ports?.messaging ?? 0, fauxqsArgs),
  ]);
  const [dynamodb, fauxqs] = started;
  if (dynamodb.status === 'fulfilled' && fauxqs.status === 'fulfilled') return running(dynamodb.value, fauxqs.value);
  await Promise.all(started.map((result) => (result.status === 'fulfilled' ? result.value.stop() : undefined)));
  const failures = started.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
  const portsInUse = failures.filter((failure): failure is PortInUseError => failure instanceof PortInUseError);
  throw portsInUse.length === failures.length ? new PortInUseError(portsInUse.flatMap((failure) => failure.taken)) : failures[0];
}

/**
 * Checked before anything starts, so a taken port fails at once rather than after a JVM start.
 * The servers still report a port taken in between.
 */
export async function takenPorts(ports: EmulatorPorts): Promise<TakenPort[]> {
  const checks = (['messaging', 'dynamodb'] as const).map(async (emulator): Promise<TakenPort[]> => {
    const port = ports[emulator] ?? 0;
    return port !== 0 && (await isTaken(port)) ? [{ emulator, port }] : [];
  });
  return (await Promise.all(checks)).flat();
}

function isTaken(port: number): Promise<boolean> {
  const probe = createServer();
  return new Promise((resolve, reject) => {
    probe.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(true) : reject(error)));
    probe.listen({ host: HOST, port }, () => probe.close(() => resolve(false)));
  });
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

async function startDynamoDbLocal(port: number, storageArgs: readonly string[]): Promise<ChildServer> {
  if (!existsSync(DYNAMODB_LOCAL_JAR)) {
    throw new EmulatorStartError(`DynamoDB Local is not installed (no ${DYNAMODB_LOCAL_JAR}); run scripts/bootstrap.sh`);
  }
  const classDir = compiledLoopbackLauncher();
  const classPath = [classDir, DYNAMODB_LOCAL_JAR].join(':');
  return startChildServer(
    'dynamodb',
    'java',
    [
      ...DYNAMODB_LOCAL_JVM_OPTIONS,
      `-Djava.library.path=${join(DYNAMODB_LOCAL_DIR, 'DynamoDBLocal_lib')}`,
      '-cp',
      classPath,
      LOOPBACK_LAUNCHER_CLASS,
      '-port',
      String(port),
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

function startFauxqs(port: number, storageArgs: readonly string[]): Promise<ChildServer> {
  // The child runs on the same Node binary (Node 24 under pnpm and vitest) with tsx for TypeScript;
  // its cwd lets `--import tsx` resolve from the workspace.
  const args = ['--import', 'tsx', FAUXQS_SERVER, '--port', String(port), ...storageArgs];
  return startChildServer('messaging', process.execPath, args, LOCAL_SOURCES);
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
 * and resolves then. Rejects with a PortInUseError if it prints {"portInUse":{"host","port"}},
 * and with the server's output if it exits, fails to spawn or stays silent for STARTUP_TIMEOUT_MS.
 */
function startChildServer(emulator: EmulatorName, command: string, args: readonly string[], cwd: string): Promise<ChildServer> {
  const name = EMULATOR_NAMES[emulator];
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
    const fail = (error: EmulatorStartError): void => {
      if (state !== 'starting') return;
      state = 'failed';
      clearTimeout(startupTimer);
      child.kill('SIGKILL');
      reject(error);
    };
    const failStart = (reason: string, cause?: unknown): void => {
      const notInstalled = (cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
      const hint = notInstalled ? ` (is ${command} installed? run scripts/bootstrap.sh)` : '';
      fail(new EmulatorStartError(describe(`did not start: ${reason}${hint}`), { cause }));
    };
    const startupTimer = setTimeout(() => failStart(`no answer within ${STARTUP_TIMEOUT_MS / 1000} s`), STARTUP_TIMEOUT_MS);

    child.on('error', (error) => failStart(error.message, error));
    // 'close' rather than 'exit': it comes after the last of the output, a port report included.
    child.on('close', (code, signal) => {
      const how = signal ? `signal ${signal}` : `code ${code}`;
      if (state === 'starting') failStart(`exited with ${how}`);
      else if (state === 'running') process.stderr.write(`${describe(`exited unexpectedly with ${how}`)}\n`);
    });
    // A parent that dies first closes this pipe; the child is meant to notice, not this process.
    child.stdin.on('error', () => undefined);
    child.stderr.setEncoding('utf8').on('data', remember);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const report = state === 'starting' ? startupReport(line) : undefined;
      if (report === undefined) {
        remember(`${line}\n`);
        return;
      }
      if (report.portInUse !== undefined) {
        fail(new PortInUseError([{ emulator, port: report.portInUse }]));
        return;
      }
      const port = report.listening;
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

type StartupReport =
  | { readonly listening: number; readonly portInUse?: never }
  | { readonly portInUse: number; readonly listening?: never };

/** The server's one line about its socket: bound (and on which port), or the port was taken. */
function startupReport(line: string): StartupReport | undefined {
  if (!line.startsWith('{"listening"') && !line.startsWith('{"portInUse"')) return undefined;
  try {
    const report = JSON.parse(line) as { listening?: { port?: unknown }; portInUse?: { port?: unknown } };
    const listening = report.listening?.port;
    const portInUse = report.portInUse?.port;
    if (isPort(listening) && listening > 0) return { listening };
    if (isPort(portInUse)) return { portInUse };
    return undefined;
  } catch {
    return undefined;
  }
}

function isPort(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 65_535;
}
