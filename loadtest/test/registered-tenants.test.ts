import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TenantsDocument } from '@adhoc-scheduler/shared';
import { parseCli } from '../src/options.js';
import { admin, fileFlags, registerTenants } from '../src/registered-tenants.js';
import type { RunResult } from '../src/report/results.js';
import { runScenario } from '../src/run.js';
import { LOAD_TEST_QUOTAS } from '../src/scenarios/scenario.js';
import { harnessClients } from '../src/service/connection.js';
import { startInProcessService } from '../src/service/in-process.js';

const dirs: string[] = [];
const newDir = async (): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), 'registered-tenants-'));
  dirs.push(dir);
  return dir;
};

afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

const readJson = async <T>(path: string): Promise<T> => JSON.parse(await readFile(path, 'utf8')) as T;

describe('tenants registered on a running local service before a load', () => {
  it('are imported as tenant import does, and the service takes the last one’s first event before registerTenants returns', async () => {
    const dir = await newDir();
    const files = { tenants: join(dir, 'tenants.json'), outputs: join(dir, 'outputs.json') };
    await writeFile(files.tenants, JSON.stringify({ public: LOAD_TEST_QUOTAS }));
    const service = await startInProcessService({
      env: {},
      emitterConcurrency: undefined,
      dataDir: undefined,
      tenants: { file: files.tenants },
      logFile: join(dir, 'service.log'),
    });
    const clients = harnessClients(service.access);
    try {
      await writeFile(files.outputs, JSON.stringify(service.local?.outputs));

      const registered = await registerTenants(files, { clients, emitterRoleArn: service.emitterRoleArn }, 30, dir, 'registered-test');
      const returnedAt = Date.now();

      expect(registered).toMatchObject({ count: 30 });
      expect(registered.importSeconds).toBeGreaterThan(0);
      expect(registered.inForceSeconds).toBeGreaterThan(0);
      // The import added the 30 to the file the service reads, each with an account of its own, and left the public tenant as it was.
      const registry = await readJson<TenantsDocument>(files.tenants);
      expect(registry.public).toEqual(LOAD_TEST_QUOTAS);
      const ids = (registry.tenants ?? []).map(({ id }) => id);
      expect(ids).toEqual(Array.from({ length: 30 }, (_, index) => `tenant-${index}`));
      expect(new Set((registry.tenants ?? []).flatMap(({ accounts }) => accounts)).size).toBe(30);
      // Each has its input topic, created by the import and named in the outputs.
      const { tenantInputTopicArns } = await readJson<{ tenantInputTopicArns: Record<string, string> }>(files.outputs);
      expect(Object.keys(tenantInputTopicArns).sort()).toEqual([...ids].sort());
      expect(tenantInputTopicArns['tenant-29']).toBe(service.inputTopicArn.replace(/-input$/, '-tenant-tenant-29'));

      // Its last tenant's first event was accepted by ingest (and delivered: its end may still be on its way to the table) before it returned.
      const shown = await admin(['event', 'show', registered.lastTenantFirstEventId, '--json', ...fileFlags(files)]);
      expect(shown.code).toBe(0);
      const record = JSON.parse(shown.stdout) as { tenant: string; createdAt: string };
      expect(record.tenant).toBe('tenant-29');
      expect(Date.parse(record.createdAt)).toBeLessThanOrEqual(returnedAt);
    } finally {
      clients.destroy();
      await service.stop();
    }
  }, 120_000);

  it('with --registered-tenants, a scenario’s service has them all before its load, its own events are delivered, and results.json says how many and how long', async () => {
    const outDir = await newDir();
    const options = parseCli([
      'steady',
      '--events',
      '30',
      '--seconds',
      '2',
      '--ahead',
      '3',
      '--settle-seconds',
      '1',
      '--registered-tenants',
      '20',
      '--no-progress',
      '--out',
      outDir,
    ]);
    if (!options) throw new Error('no options');

    const { result } = await runScenario(options, 'registered tenants test');

    expect(result.registeredTenants).toMatchObject({ count: 20 });
    expect(result.delivery?.counts).toMatchObject({ missing: 0, duplicated: 0, early: 0, unexpected: 0, publishFailed: 0 });
    const written = await readJson<RunResult>(join(outDir, 'results.json'));
    expect(written.registeredTenants?.count).toBe(20);
    expect(written.registeredTenants?.importSeconds).toBeGreaterThan(0);
    expect(written.files.tenants).toBe('tenants.json');
    // The service's registry, kept with the results: the public tenant the load is, and the 20.
    const registry = await readJson<TenantsDocument>(join(outDir, 'tenants.json'));
    expect(registry.tenants).toHaveLength(20);
    // The service read the file with all 20 in it before the scenario began.
    const readings = (await readFile(join(outDir, 'service.log'), 'utf8'))
      .split('\n')
      .filter((line) => line.includes('tenants file read again'))
      .map((line) => JSON.parse(line) as { time: string; tenants: number });
    const complete = readings.find((reading) => reading.tenants === 20);
    expect(complete).toBeDefined();
    expect(Date.parse(complete?.time ?? '')).toBeLessThan(Date.parse(result.loadStartedAt));
  }, 180_000);
});
