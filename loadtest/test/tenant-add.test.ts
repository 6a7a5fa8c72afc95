import { describe, expect, it } from 'vitest';
import { LoadTestUsageError } from '../src/options.js';
import { parseTenantAddCli } from '../src/tenant-add.js';

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
});
