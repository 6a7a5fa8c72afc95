import { describe, expect, it } from 'vitest';
import { LoadTestUsageError } from '../src/options.js';
import { parseRegistryCli, runRegistry } from '../src/registry.js';

describe('loadtest registry', () => {
  it('reads 10,000 tenants by default, and refuses a count that is not a positive integer', () => {
    expect(parseRegistryCli([])).toEqual({ tenants: 10_000 });
    expect(parseRegistryCli(['--tenants', '250'])).toEqual({ tenants: 250 });
    expect(parseRegistryCli(['--help'])).toBeUndefined();
    expect(() => parseRegistryCli(['--tenants', '0'])).toThrow(LoadTestUsageError);
  });

  it("answers every lookup as the registry rules: a tenant's own account yes, another tenant's never", () => {
    const result = runRegistry({ tenants: 50 });
    expect(result).toMatchObject({ tenants: 50, lookups: 100_000, allowed: 50_000 });
  });
});
