import { execFile, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { clientsFor, TopicSubscriber, type Received } from '@adhoc-scheduler/quickstart/client-topics';
import { answers } from '@adhoc-scheduler/shared/local-service-access';
import { runAdmin } from '../../src/admin/cli.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION, type LocalOutputs } from '../../src/local/runtime.js';
import { closedEndpoint, FAST_TIMINGS, sharedEmulators, startTestScheduler, waitFor } from './kit.js';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');
const QUICKSTART = join(REPO_ROOT, 'quickstart/src/quickstart.ts');
const PUBLISH_EXAMPLE = join(REPO_ROOT, 'quickstart/examples/publish-event.ts');
/** The page that shows clients the SDK and AWS CLI examples. */
const CLIENTS_PAGE = 'docs/clients.md';
const TSX = import.meta.resolve('tsx');

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a TypeScript file as `pnpm quickstart` does, with `cwd` as its working directory: the
 * default `.local/outputs.json` is then the test's own, never the one a user keeps in the checkout.
 */
function runFile(file: string, args: readonly string[], cwd: string): Promise<Run> {
  return new Promise((done) => {
    execFile(process.execPath, ['--import', TSX, file, ...args], { cwd, timeout: 90_000 }, (error, stdout, stderr) => {
      done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
  });
}

/** A directory laid out as a checkout: `.local/outputs.json` holding `outputs`, if given. */
async function checkout(outputs?: object): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'quickstart-'));
  dirs.push(dir);
  if (outputs !== undefined) {
    await mkdir(join(dir, '.local'));
    await writeFile(join(dir, '.local', 'outputs.json'), JSON.stringify(outputs));
  }
  return dir;
}

/** The outputs a service killed with kill -9 leaves behind: nothing answers at their endpoint any more. */
async function staleOutputs(): Promise<
  Pick<LocalOutputs, 'region' | 'endpoint' | 'inputTopicArn' | 'emitterRoleArn' | 'nearPathWindowSeconds'>
> {
  return {
    region: LOCAL_REGION,
    endpoint: await closedEndpoint(),
    inputTopicArn: 'arn:aws:sns:us-east-1:000000000000:adhoc-scheduler-input',
    emitterRoleArn: 'arn:aws:iam::000000000000:role/adhoc-scheduler-emitter',
    nearPathWindowSeconds: 600,
  };
}

function expectAllThreeOutcomes(stdout: string): void {
  expect(stdout).toMatch(/arrived\s+near\s+scheduled .* lateness at arrival \+\d+ ms/);
  expect(stdout).toMatch(/arrived\s+far\s+scheduled .* lateness at arrival \+\d+ ms/);
  expect(stdout).toMatch(/failure\s+INVALID_DATE/);
  expect(stdout).toContain('All three outcomes arrived.');
}

const emulators = sharedEmulators();
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

// Each test waits mostly for due times, on its own service: they wait together.
describe.concurrent('the quickstart', () => {
  it('uses the local service that answers, and shows the near and far events arriving and the invalid one on the failure topic', async () => {
    const scheduler = await startTestScheduler(emulators, { env: FAST_TIMINGS });
    try {
      const dir = await checkout(scheduler.outputs);
      const far = scheduler.config.nearPathWindowSeconds + 4;
      const run = await runFile(QUICKSTART, ['--near-seconds', '2', '--far-seconds', String(far)], dir);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout).toContain(`Using the local service at ${scheduler.outputs.endpoint} (.local/outputs.json).`);
      expectAllThreeOutcomes(run.stdout);
    } finally {
      await scheduler.stop();
    }
  });

  it('starts a demo service of its own when nothing answers at the outputs a killed service left, and stops it at the end', async () => {
    const stale = await staleOutputs();
    const run = await runFile(QUICKSTART, ['--near-seconds', '2', '--far-seconds', '12'], await checkout(stale));
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`nothing answers at ${stale.endpoint}, the endpoint in .local/outputs.json`);
    expect(run.stdout).toContain('starting a demo service');
    expectAllThreeOutcomes(run.stdout);
    const demoEndpoint = run.stdout.match(/^Demo service at (\S+):/m)?.[1];
    expect(demoEndpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await answers(demoEndpoint ?? '')).toBe(false);
  });

  it('fails in one line, exit code 1, when the service it is pointed at does not answer or a flag is wrong', async () => {
    const dir = await checkout();
    const outputs = join(dir, 'outputs.json');
    const stale = await staleOutputs();
    await writeFile(outputs, JSON.stringify(stale));
    for (const [args, message] of [
      [['--outputs', outputs], `quickstart: nothing answers at ${stale.endpoint}, the endpoint in ${outputs}`],
      [['--outputs', join(dir, 'none.json')], 'quickstart: no local service is running'],
      [['--near-seconds', 'soon'], 'quickstart: --near-seconds takes a number of seconds above 0, not "soon"'],
      [['--stack-outputs', join(dir, 'cdk-outputs.json')], `quickstart: ${join(dir, 'cdk-outputs.json')} not found`],
    ] as const) {
      const run = await runFile(QUICKSTART, args, dir);
      expect(run.code).toBe(1);
      expect(run.stderr.endsWith('\n') && run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toContain(message);
    }
  });
});

describe.concurrent("the clients page's SDK example", () => {
  it('is the file the clients page shows', async () => {
    const page = await readFile(join(REPO_ROOT, CLIENTS_PAGE), 'utf8');
    const example = await readFile(PUBLISH_EXAMPLE, 'utf8');
    expect(page.includes(`\`\`\`ts\n${example}\`\`\``), `${CLIENTS_PAGE} shows quickstart/examples/publish-event.ts as it is`).toBe(true);
  });

  it('says in one line, exit code 1, that nothing answers at the outputs a killed service left, and to start it', async () => {
    const stale = await staleOutputs();
    const run = await runFile(PUBLISH_EXAMPLE, [], await checkout(stale));
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toBe(
      `nothing answers at ${stale.endpoint}, the endpoint in .local/outputs.json: start the local service first (scripts/start)\n`,
    );
  });

  it('runs as written: the event it schedules reaches the topic it creates', async () => {
    const scheduler = await startTestScheduler(emulators, { env: FAST_TIMINGS });
    const clients = clientsFor({ region: LOCAL_REGION, endpoint: scheduler.outputs.endpoint, credentials: LOCAL_CREDENTIALS });
    const received: Received[] = [];
    let subscriber: TopicSubscriber | undefined;
    try {
      const run = await runFile(PUBLISH_EXAMPLE, [], await checkout(scheduler.outputs));
      expect(run).toMatchObject({ code: 0, stderr: '' });
      const [, target, eventId] = run.stdout.match(/^Scheduled for \S+ to (\S+): see it with scripts\/admin event show (m-\S+)$/m) ?? [];
      expect(target).toBe(`arn:aws:sns:${LOCAL_REGION}:000000000000:invoice-reminders`);
      subscriber = await TopicSubscriber.subscribe(clients, target ?? '', 'invoice-reminders-consumer', (message) =>
        received.push(message),
      );
      await waitFor(() => received.length > 0, 'the event at its due time', 30_000);
      expect(received[0]).toMatchObject({ body: '{"invoice":42}', attributes: { 'scheduler-event-id': eventId } });
    } finally {
      await subscriber?.stop();
      await scheduler.stop();
    }
  });
});

/** The clients page's shell example after the line that introduces it. */
async function shellExample(introduction: string): Promise<string> {
  const page = await readFile(join(REPO_ROOT, CLIENTS_PAGE), 'utf8');
  const after = page.slice(page.indexOf(introduction));
  const block = after.match(/^```sh\n([\s\S]*?)^```$/m)?.[1];
  if (page.indexOf(introduction) < 0 || block === undefined)
    throw new Error(`${CLIENTS_PAGE} has no shell example after "${introduction}"`);
  return block;
}

const installed = (command: string): boolean => spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;

// It needs the AWS CLI and jq, which the project does not install.
describe.runIf(installed('aws') && installed('jq'))("the clients page's AWS CLI example", () => {
  it('creates a target the emitter role may publish to, and the event it schedules there is emitted, as event show says', async () => {
    const scheduler = await startTestScheduler(emulators, { env: FAST_TIMINGS });
    try {
      const dir = await checkout(scheduler.outputs);
      const example = await shellExample('With the AWS CLI (and `jq`), against the local service');
      const run = await new Promise<Run>((done) => {
        // --norc: Node's pipes are sockets, so Debian's bash may take itself for an ssh session and read /etc/bash.bashrc.
        execFile('bash', ['--norc', '-euo', 'pipefail', '-c', example], { cwd: dir, timeout: 60_000 }, (error, stdout, stderr) => {
          done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
        });
      });
      expect(run).toMatchObject({ code: 0, stderr: '' });
      const messageId = run.stdout.match(/[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}/)?.[0];
      expect(messageId, run.stdout).toBeDefined();

      const shown = await waitFor(
        async () => {
          const out: string[] = [];
          await runAdmin(
            [
              'event',
              'show',
              `m-${messageId ?? ''}`,
              '--json',
              '--outputs',
              join(dir, '.local', 'outputs.json'),
              '--tenants',
              join(dir, '.local', 'tenants.json'),
            ],
            {
              out: (text) => out.push(text),
              err: () => undefined,
            },
          );
          const record = out.length === 0 ? undefined : (JSON.parse(out.join('\n')) as { state: string; target: string; reason?: string });
          return record !== undefined && record.state !== 'scheduled' && record.state !== 'queued' && record;
        },
        'the event emitted or failed',
        40_000,
      );
      expect(shown).toMatchObject({ state: 'emitted', target: `arn:aws:sns:${LOCAL_REGION}:000000000000:my-topic` });
    } finally {
      await scheduler.stop();
    }
  }, 90_000);
});
