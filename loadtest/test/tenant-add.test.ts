import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LoadTestUsageError } from '../src/options.js';
import { parseTenantAddCli, registryReadAfter } from '../src/tenant-add.js';

describe('loadtest tenant-add', () => {
  it('adds three tenants each way after 10,000 registered by default, and refuses counts out of range', () => {
    expect(parseTenantAddCli([])).toEqual({ registered: 10_000, adds: 3, dataDir: undefined, outDir: undefined });
    expect(parseTenantAddCli(['--registered', '0', '--adds', '1', '--data-dir', '/tmp/d', '--out', 'o'])).toEqual({
      registered: 0,
      adds: 1,
      dataDir: '/tmp/d',
      outDir: 'o',
    });
    expect(parseTenantAddCli(['--help'])).toBeUndefined();
    expect(() => parseTenantAddCli(['--registered', '100001'])).toThrow(LoadTestUsageError);
    expect(() => parseTenantAddCli(['--adds', '0'])).toThrow(/--adds/);
    expect(() => parseTenantAddCli(['extra'])).toThrow(/unexpected/);
  });

  it('finds when the service read its tenants file again, from a moment on, in its log', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tenant-add-log-'));
    try {
      const log = join(dir, 'service.log');
      const line = (time: string, msg: string) => JSON.stringify({ level: 30, time, msg, tenants: ['public'] });
      await writeFile(
        log,
        [
          line('2026-12-05T10:00:00.500Z', 'tenants file read again; its registry is in force'),
          line('2026-12-05T10:00:01.000Z', 'loader tick done'),
          'not JSON, and not the line',
          line('2026-12-05T10:00:01.600Z', 'tenants file read again; its registry is in force'),
          '',
        ].join('\n'),
      );
      expect(await registryReadAfter(log, Date.parse('2026-12-05T10:00:00.000Z'))).toBe(Date.parse('2026-12-05T10:00:00.500Z'));
      expect(await registryReadAfter(log, Date.parse('2026-12-05T10:00:00.600Z'))).toBe(Date.parse('2026-12-05T10:00:01.600Z'));
      expect(await registryReadAfter(log, Date.parse('2026-12-05T10:00:02.000Z'))).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
