import { parseArgs } from 'node:util';
import { mayPublishTo, parseTenantsDocument, TenantRegistry, type TenantsDocument } from '@adhoc-scheduler/shared';
import { LoadTestUsageError } from './usage-error.js';

export const REGISTRY_USAGE = `Usage: loadtest registry [--tenants N]

What a tenant registry of N tenants costs whoever reads it (the local service at each change of
its tenants file, tenant add and import, a function's start): the registry check of the whole
document (schema, ids, accounts, dead-letter topics), the registry built from it, and 100,000
lookups of whether a tenant may publish to a topic. Each tenant has an account of its own, may
target the emulator's account too, and has a dead-letter topic in its own account. No service
is started.

  --tenants N   registered tenants                                   [10,000]`;

export interface RegistryOptions {
  readonly tenants: number;
}

export interface RegistryResult {
  readonly tenants: number;
  readonly checkMs: number;
  readonly buildMs: number;
  readonly lookups: number;
  readonly lookupsMs: number;
  /** Lookups answered yes: each tenant's own dead-letter topic, never another tenant's. */
  readonly allowed: number;
}

const LOOKUPS = 100_000;

export function parseRegistryCli(args: readonly string[]): RegistryOptions | undefined {
  const { values } = parseArgs({
    args: [...args],
    options: { tenants: { type: 'string', default: '10000' }, help: { type: 'boolean', short: 'h', default: false } },
  });
  if (values.help) return undefined;
  const tenants = Number(values.tenants);
  if (!Number.isInteger(tenants) || tenants < 1 || tenants > 1_000_000)
    throw new LoadTestUsageError(`--tenants must be an integer from 1 to 1000000, got "${values.tenants}"`);
  return { tenants };
}

/** The account of tenant `index`: 12 digits, none the emulator's. */
const accountOf = (index: number): string => String(100_000_000_000 + index);

export function registryDocument(tenants: number): TenantsDocument {
  return {
    tenants: Array.from({ length: tenants }, (_, index) => ({
      id: `tenant-${index}`,
      accounts: [accountOf(index)],
      targetAccounts: ['000000000000'],
      deadLetterTopic: `arn:aws:sns:us-east-1:${accountOf(index)}:dead-letters`,
    })),
  };
}

export function runRegistry(options: RegistryOptions): RegistryResult {
  const document = registryDocument(options.tenants);
  const started = performance.now();
  parseTenantsDocument(document, { region: 'us-east-1' });
  const checked = performance.now();
  const registry = new TenantRegistry(document, 'scheduler');
  const built = performance.now();
  let allowed = 0;
  for (let lookup = 0; lookup < LOOKUPS; lookup++) {
    const tenant = registry.tenant(`tenant-${lookup % options.tenants}`);
    // Half its own topic, half the next tenant's: one allowed, one never.
    const account = accountOf((lookup + (lookup % 2)) % options.tenants);
    if (tenant !== undefined && mayPublishTo(tenant, `arn:aws:sns:us-east-1:${account}:t`)) allowed++;
  }
  const looked = performance.now();
  return {
    tenants: options.tenants,
    checkMs: checked - started,
    buildMs: built - checked,
    lookups: LOOKUPS,
    lookupsMs: looked - built,
    allowed,
  };
}

export function registrySummary(result: RegistryResult): string {
  const ms = (value: number) => value.toFixed(1);
  return [
    `registry: ${result.tenants.toLocaleString('en-US')} tenants`,
    `  check ${ms(result.checkMs)} ms, build ${ms(result.buildMs)} ms, ${result.lookups.toLocaleString('en-US')} lookups ${ms(result.lookupsMs)} ms (${result.allowed.toLocaleString('en-US')} allowed)`,
  ].join('\n');
}
