import { describe, expect, it } from 'vitest';
import { parseLoaderTickCli } from '../src/loader-tick.js';
import { LoadTestUsageError } from '../src/options.js';

describe('loadtest loader-tick', () => {
  it('measures 10 active tenants of 10,000 by default, and refuses counts out of range', () => {
    expect(parseLoaderTickCli([])).toEqual({ tenants: 10_000, active: 10, events: 100, ticks: 5, dataDir: undefined, incomplete: false });
    expect(parseLoaderTickCli(['--tenants', '50', '--active', '5', '--data-dir', '/tmp/d', '--incomplete'])).toMatchObject({
      tenants: 50,
      active: 5,
      dataDir: '/tmp/d',
      incomplete: true,
    });
    expect(parseLoaderTickCli(['--help'])).toBeUndefined();
    expect(() => parseLoaderTickCli(['--tenants', '10', '--active', '11'])).toThrow(LoadTestUsageError);
    expect(() => parseLoaderTickCli(['--ticks', '0'])).toThrow(LoadTestUsageError);
  });
});
