import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REASON } from '@adhoc-scheduler/shared';
import { answers } from '@adhoc-scheduler/shared/local-service-access';
import { writeJsonFile } from '../../src/local/json-file.js';
import { LOCAL_ACCOUNT } from '../../src/local/runtime.js';
import {
  capturingLogger,
  closedEndpoint,
  FAST_TIMINGS,
  request,
  SchedulerClient,
  sharedEmulators,
  startTestScheduler,
  TopicConsumer,
  waitFor,
} from './kit.js';
import { outputsOf, spawnService, type ServiceProcess } from './service-process.js';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');
const dirs: string[] = [];
const services: ServiceProcess[] = [];

/** scripts/start itself, as a user types it, from the repository root. */
function startScript(args: readonly string[]): Promise<{ readonly code: number; readonly stdout: string; readonly stderr: string }> {
  return new Promise((done) => {
    execFile(join(REPO_ROOT, 'scripts/start'), args, { cwd: REPO_ROOT, timeout: 60_000 }, (error, stdout, stderr) => {
      done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
  });
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'service-files-'));
  dirs.push(dir);
  return dir;
}

function start(dir: string, options: Parameters<typeof spawnService>[1] = {}): ServiceProcess {
  const service = spawnService(dir, { ...options, args: ['--in-memory', ...(options.args ?? [])] });
  services.push(service);
  return service;
}

afterEach(async () => {
  for (const service of services.splice(0)) service.child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('scripts/start and its outputs file', () => {
  it('writes the file once the service answers, removes it when stopped, and says when it has stopped', async () => {
    const service = start(await tempDir(), { env: { ...FAST_TIMINGS, LOG_LEVEL: 'info' } });
    // Checked the moment the file appears: a script that waits for it finds the service ready.
    const outputs = await outputsOf(service);
    expect(await answers(outputs.endpoint)).toBe(true);
    await waitFor(() => service.stdout().includes('"msg":"loader tick done"'), 'a loader tick logged');

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(existsSync(service.outputsFile)).toBe(false);
    expect(service.stderr().trim().split('\n').at(-1)).toBe('Stopped.');
    // Every log line names its function once.
    const lines = service.stdout().trim().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.match(/"fn":/g)?.length ?? 0, line).toBeLessThanOrEqual(1);
    expect(lines.filter((line) => line.includes('"msg":"loader tick done"')).every((line) => line.includes('"fn":"loader"'))).toBe(true);
  });

  it('removes the file a killed service left before it starts, so that no script takes it for the new one', async () => {
    const dir = await tempDir();
    const stale = { endpoint: await closedEndpoint(), region: 'us-east-1' };
    await writeFile(join(dir, 'outputs.json'), JSON.stringify(stale));
    const service = start(dir);
    await waitFor(() => !existsSync(service.outputsFile), 'the stale outputs removed');
    const outputs = await outputsOf(service);
    expect(outputs.endpoint).not.toBe(stale.endpoint);
    expect(await answers(outputs.endpoint)).toBe(true);
  });

  it('refuses an unknown or bad option in one line with the help hint, exit code 2, before starting anything (through scripts/start)', async () => {
    const dir = await tempDir();
    const outputsFile = join(dir, 'outputs.json');
    // Should a refusal fail, the service started is one of the test's own: its ports and files.
    const own = [
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
    for (const [args, named] of [
      [['--inmemory'], "'--inmemory'"],
      [['--port', '70000'], '--port takes a port from 0 to 65535, not 70000'],
      [['--port', '5000', '--dynamodb-port', '5000'], 'need different ports'],
      [['--in-memory', '--data-dir', dir], '--data-dir and --in-memory exclude each other'],
      [['memory'], "'memory'"],
    ] as const) {
      const run = await startScript([...own, ...args]);
      expect(run, args.join(' ')).toMatchObject({ code: 2, stdout: '' });
      expect(run.stderr.endsWith('\n') && run.stderr.trim().split('\n')).toEqual([expect.stringContaining(named)]);
      expect(run.stderr.trim()).toMatch(/ \(scripts\/start --help lists the options\)$/);
      expect(existsSync(outputsFile)).toBe(false);
    }
  });

  it('refuses an invalid tenants file in one line naming the file and the field, before starting anything', async () => {
    const dir = await tempDir();
    for (const [registry, field] of [
      [{ tenants: [{ id: 'acme', accounts: ['12345'] }] }, '/tenants/0/accounts/0'],
      [{ tenants: [{ id: 'acme', accounts: ['111111111111'], maxOpenEvent: 10 }] }, '"maxOpenEvent"'],
      // The service's own shared input topic (scripts/start names its topics adhoc-scheduler-...).
      [
        { public: { deadLetterTopic: `arn:aws:sns:us-east-1:${LOCAL_ACCOUNT}:adhoc-scheduler-input` } },
        "is one of the scheduler's own topics",
      ],
      ['{"tenants": [', 'not JSON'],
    ] as const) {
      const service = start(dir);
      await writeFile(service.tenantsFile, typeof registry === 'string' ? registry : JSON.stringify(registry));
      expect(await service.exited).toBe(1);
      const message = service.stderr().trim();
      expect(message.split('\n')).toHaveLength(1);
      expect(message).toContain(`${service.tenantsFile} is not a valid tenant registry`);
      expect(message).toContain(field);
      expect(existsSync(service.outputsFile)).toBe(false);
    }
  });
});

describe('the tenants file of a running service', () => {
  const emulators = sharedEmulators();

  it('logs an invalid edit at once, naming the file and the field, and keeps the last valid registry in force', async () => {
    const tenantsFile = join(await tempDir(), 'tenants.json');
    await writeFile(tenantsFile, JSON.stringify({ tenants: [{ id: 'acme', accounts: [LOCAL_ACCOUNT] }] }));
    const { logger, lines } = capturingLogger();
    const scheduler = await startTestScheduler(emulators, { logger, tenants: { file: tenantsFile }, env: FAST_TIMINGS });
    const acme = new SchedulerClient(scheduler, scheduler.outputs.tenantInputTopicArns.acme);
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    try {
      await writeJsonFile(tenantsFile, { tenants: [{ id: 'acme', accounts: ['not an account'] }] });
      // Nothing is published meanwhile: the file is watched, not only read when a message comes.
      const warning = await waitFor(() => lines.find((line) => line.level === 40 && line.path === tenantsFile), 'the rejection logged');
      expect(String(warning.problem)).toContain('/tenants/0/accounts/0');
      expect(String(warning.msg)).toContain('the last valid registry stays in force');

      await acme.publish(request(target.topicArn, Date.now() + 1_000, 'still acme'));
      await waitFor(() => target.withPayload('still acme').length > 0, "acme's event, under the last valid registry");
      expect(lines.filter((line) => line.level === 40 && line.path === tenantsFile)).toHaveLength(1);

      await writeJsonFile(tenantsFile, { tenants: [{ id: 'acme', accounts: [LOCAL_ACCOUNT], maxOpenEvents: 5 }] });
      await waitFor(() => lines.some((line) => line.level === 30 && line.path === tenantsFile), 'the corrected file read');
    } finally {
      acme.destroy();
      await target.stop();
      await scheduler.stop();
    }
  });

  it("refuses on re-reading a dead-letter topic that is one of the service's own topics, and keeps the last valid registry", async () => {
    const tenantsFile = join(await tempDir(), 'tenants.json');
    await writeFile(tenantsFile, JSON.stringify({ tenants: [{ id: 'acme', accounts: [LOCAL_ACCOUNT] }] }));
    const { logger, lines } = capturingLogger();
    const scheduler = await startTestScheduler(emulators, { logger, tenants: { file: tenantsFile }, env: FAST_TIMINGS });
    try {
      const ownTopic = scheduler.outputs.tenantInputTopicArns.acme;
      await writeJsonFile(tenantsFile, { tenants: [{ id: 'acme', accounts: [LOCAL_ACCOUNT], deadLetterTopic: ownTopic }] });
      const warning = await waitFor(() => lines.find((line) => line.level === 40 && line.path === tenantsFile), 'the rejection logged');
      expect(String(warning.problem)).toContain(`deadLetterTopic ${ownTopic} is one of the scheduler's own topics`);
      expect(String(warning.msg)).toContain('the last valid registry stays in force');
    } finally {
      await scheduler.stop();
    }
  });

  it('keeps the last registry in force while the file is missing, says so once, and reads the file again when it is back', async () => {
    const tenantsFile = join(await tempDir(), 'tenants.json');
    await writeFile(tenantsFile, JSON.stringify({ tenants: [{ id: 'acme', accounts: [LOCAL_ACCOUNT] }] }));
    const { logger, lines } = capturingLogger();
    const scheduler = await startTestScheduler(emulators, { logger, tenants: { file: tenantsFile }, env: FAST_TIMINGS });
    const acme = new SchedulerClient(scheduler, scheduler.outputs.tenantInputTopicArns.acme);
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    const aboutTheFile = () => lines.filter((line) => line.path === tenantsFile);
    const refused = () => lines.filter((line) => line.reason === REASON.UNKNOWN_TENANT);
    try {
      // An editor saving by rename, or an operator's mv: for a while there is no file.
      await rename(tenantsFile, `${tenantsFile}.moved`);
      await waitFor(() => aboutTheFile().length > 0, 'the service to notice');

      await acme.publish(request(target.topicArn, Date.now() + 1_000, 'while the file is away'));
      await waitFor(
        () => target.withPayload('while the file is away').length > 0 || refused().length > 0,
        "acme's event delivered or refused",
      );
      expect(refused()).toEqual([]);
      expect(aboutTheFile().map((line) => [line.level, line.msg])).toEqual([
        [40, `${tenantsFile} is missing; the last registry stays in force until the file is back`],
      ]);

      await writeJsonFile(tenantsFile, { tenants: [{ id: 'acme', accounts: [LOCAL_ACCOUNT], maxOpenEvents: 5 }] });
      await waitFor(() => lines.some((line) => line.level === 30 && line.path === tenantsFile), 'the file read again');
    } finally {
      acme.destroy();
      await target.stop();
      await scheduler.stop();
    }
  });
});
