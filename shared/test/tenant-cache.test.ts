import { describe, expect, it } from 'vitest';
import type { TenantRegistryReads } from '../src/app/ports/tenants.js';
import { CachedTenantDirectory } from '../src/app/tenant-cache.js';
import { TransientError } from '../src/domain/reasons.js';
import { registryChanges, type RegistryChanges } from '../src/domain/registry-changes.js';
import { mayPublishTo, type PublicTenantSettings, type TenantEntry, type TenantsDocument } from '../src/domain/tenants.js';
import { FakeClock, RecordingLogger } from './fakes.js';

/**
 * The registry kept as data, read through a cache: what a function answers from memory, how soon
 * a change is in force, and what a failed read leaves in force.
 */

const PREFIX = 'sched';
const MAX_AGE_MS = 5000;
const ACME: TenantEntry = { id: 'acme', accounts: ['111111111111'], maxIngestPerSecond: 10 };
const GLOBEX: TenantEntry = { id: 'globex', accounts: ['222222222222'] };
const topicOf = (id: string) => `arn:aws:sns:us-east-1:999999999999:${PREFIX}-tenant-${id}`;
const PUBLIC_TOPIC = `arn:aws:sns:us-east-1:999999999999:${PREFIX}-input`;

/** A registry in memory, as the table holds it, that counts its reads and fails when told. */
class MemoryRegistry implements TenantRegistryReads {
  private document: TenantsDocument = {};
  reads = 0;
  failing = false;

  set(document: TenantsDocument): void {
    this.document = document;
  }

  async entries(ids: readonly string[]): Promise<ReadonlyMap<string, TenantEntry>> {
    this.read();
    return new Map((this.document.tenants ?? []).filter(({ id }) => ids.includes(id)).map((entry) => [entry.id, entry]));
  }

  async publicSettings(): Promise<PublicTenantSettings> {
    this.read();
    return this.document.public ?? {};
  }

  async owners(accounts: readonly string[]): Promise<ReadonlyMap<string, readonly string[]>> {
    this.read();
    const changes: RegistryChanges = registryChanges({}, this.document);
    return new Map([...changes.accountOwners].filter(([account]) => accounts.includes(account)));
  }

  async ids(): Promise<readonly string[]> {
    this.read();
    return (this.document.tenants ?? []).map(({ id }) => id);
  }

  private read(): void {
    this.reads++;
    if (this.failing) throw new TransientError('DynamoDB BatchGetItem failed: throttled');
  }
}

function directory(registry: MemoryRegistry) {
  const clock = new FakeClock(1_000_000);
  const logger = new RecordingLogger();
  return { clock, logger, tenants: new CachedTenantDirectory(registry, { topicPrefix: PREFIX, maxAgeMs: MAX_AGE_MS, clock, logger }) };
}

describe('the registry read through a cache', () => {
  it('knows a tenant by its input topic and by id, the defaults applied', async () => {
    const registry = new MemoryRegistry();
    registry.set({ tenants: [ACME, GLOBEX] });
    const { tenants } = directory(registry);
    const found = await tenants.lookup({ topicArns: [topicOf('acme')], ids: ['globex'] });
    expect(found.forTopic(topicOf('acme'))?.quotas.maxIngestPerSecond).toBe(10);
    expect(found.tenant('globex')?.accounts).toEqual(['222222222222']);
    expect(found.forTopic(`arn:aws:sns:us-east-1:999999999999:other-tenant-acme`)).toBeUndefined();
    expect(found.forTopic(PUBLIC_TOPIC)).toBeUndefined();
    expect((await tenants.lookup({ topicArns: [PUBLIC_TOPIC] })).forTopic(PUBLIC_TOPIC)?.id).toBe('public');
  });

  it('answers from memory for the bound, reading again ahead once half of it has passed: a change is in force within it', async () => {
    const registry = new MemoryRegistry();
    registry.set({ tenants: [ACME] });
    const { tenants, clock } = directory(registry);
    const readAt = clock.now();
    await tenants.lookup({ ids: ['acme'] });
    registry.set({ tenants: [{ ...ACME, maxIngestPerSecond: 20 }] });
    clock.set(readAt + MAX_AGE_MS / 2 - 1);
    expect((await tenants.lookup({ ids: ['acme'] })).tenant('acme')?.quotas.maxIngestPerSecond).toBe(10);
    expect(registry.reads).toBe(1);
    // Past half the bound: answered from memory at once, and read again behind the answer.
    clock.set(readAt + MAX_AGE_MS - 1);
    expect((await tenants.lookup({ ids: ['acme'] })).tenant('acme')?.quotas.maxIngestPerSecond).toBe(10);
    expect(registry.reads).toBe(2);
    expect((await tenants.lookup({ ids: ['acme'] })).tenant('acme')?.quotas.maxIngestPerSecond).toBe(20);
    expect(registry.reads).toBe(2);
  });

  it('keeps a tenant not registered for the bound too, and knows it once registered after', async () => {
    const registry = new MemoryRegistry();
    const { tenants, clock } = directory(registry);
    expect((await tenants.lookup({ topicArns: [topicOf('acme')] })).forTopic(topicOf('acme'))).toBeUndefined();
    registry.set({ tenants: [ACME] });
    expect((await tenants.lookup({ topicArns: [topicOf('acme')] })).forTopic(topicOf('acme'))).toBeUndefined();
    expect(registry.reads).toBe(1);
    clock.set(clock.now() + MAX_AGE_MS);
    expect((await tenants.lookup({ topicArns: [topicOf('acme')] })).forTopic(topicOf('acme'))?.id).toBe('acme');
  });

  it('keeps what it read before when a read fails, however old: a registered tenant is never taken for unknown', async () => {
    const registry = new MemoryRegistry();
    registry.set({ tenants: [ACME] });
    const { tenants, clock, logger } = directory(registry);
    await tenants.lookup({ ids: ['acme'] });
    registry.failing = true;
    clock.set(clock.now() + 10 * MAX_AGE_MS);
    expect((await tenants.lookup({ ids: ['acme'] })).tenant('acme')?.id).toBe('acme');
    expect(logger.at('warn').map(({ message }) => message)).toEqual([
      'the tenant registry could not be read (tenants); what was read before stays in force',
    ]);
    registry.failing = false;
    registry.set({});
    expect((await tenants.lookup({ ids: ['acme'] })).tenant('acme')).toBeUndefined();
  });

  it('fails the batch, to be retried, when what it never read cannot be read', async () => {
    const registry = new MemoryRegistry();
    registry.set({ tenants: [ACME] });
    registry.failing = true;
    const { tenants } = directory(registry);
    await expect(tenants.lookup({ topicArns: [topicOf('acme')] })).rejects.toBeInstanceOf(TransientError);
  });

  it('reads a key once for lookups made while it is being read', async () => {
    const registry = new MemoryRegistry();
    registry.set({ tenants: [ACME, GLOBEX] });
    const { tenants } = directory(registry);
    const found = await Promise.all([
      tenants.lookup({ ids: ['acme'] }),
      tenants.lookup({ ids: ['acme'] }),
      tenants.lookup({ ids: ['acme'] }),
    ]);
    expect(found.map((lookup) => lookup.tenant('acme')?.id)).toEqual(['acme', 'acme', 'acme']);
    expect(registry.reads).toBe(1);
  });

  it("keeps the public tenant off another tenant's own account by the accounts looked up, and refuses to guess one not looked up", async () => {
    const registry = new MemoryRegistry();
    registry.set({ tenants: [ACME] });
    const { tenants } = directory(registry);
    const found = await tenants.lookup({ topicArns: [PUBLIC_TOPIC], accounts: ['111111111111', '333333333333'] });
    const publicTenant = found.forTopic(PUBLIC_TOPIC);
    if (publicTenant === undefined) throw new Error('no public tenant');
    expect(mayPublishTo(publicTenant, 'arn:aws:sns:us-east-1:111111111111:theirs')).toBe(false);
    expect(mayPublishTo(publicTenant, 'arn:aws:sns:us-east-1:333333333333:anyone')).toBe(true);
    expect(() => mayPublishTo(publicTenant, 'arn:aws:sns:us-east-1:444444444444:unasked')).toThrow(/not looked up/);
  });

  it('lists every registered id, the public tenant first', async () => {
    const registry = new MemoryRegistry();
    registry.set({ tenants: [ACME, GLOBEX] });
    expect(await directory(registry).tenants.ids()).toEqual(['public', 'acme', 'globex']);
  });
});

describe('the changes between two registries', () => {
  it('writes the entries that changed, takes out those gone, and gives each account touched its owners after', () => {
    const changes = registryChanges(
      { tenants: [ACME, GLOBEX, { id: 'initech', accounts: ['333333333333'] }] },
      {
        public: { maxIngestPerSecond: 5 },
        tenants: [
          { ...ACME, maxIngestPerSecond: 10 },
          { ...GLOBEX, accounts: ['111111111111'] },
        ],
      },
    );
    expect(changes.put.map(({ id }) => id)).toEqual(['globex']);
    expect(changes.remove).toEqual(['initech']);
    expect(changes.publicSettings).toEqual({ maxIngestPerSecond: 5 });
    expect(Object.fromEntries(changes.accountOwners)).toEqual({
      '111111111111': ['acme', 'globex'],
      '222222222222': [],
      '333333333333': [],
    });
  });

  it('changes nothing between a registry and the same written in another key order', () => {
    const changes = registryChanges(
      { public: { enabled: true, maxIngestPerSecond: 5 }, tenants: [ACME] },
      { public: { maxIngestPerSecond: 5, enabled: true }, tenants: [{ maxIngestPerSecond: 10, accounts: ['111111111111'], id: 'acme' }] },
    );
    expect(changes).toEqual({ put: [], remove: [], publicSettings: undefined, accountOwners: new Map() });
  });

  it('takes the public settings back to their defaults when the registry has none', () => {
    expect(registryChanges({ public: { enabled: false } }, {}).publicSettings).toBeNull();
  });
});
