import { LRUCache } from 'lru-cache';
import { TransientError } from '../domain/reasons.js';
import {
  PUBLIC_TENANT_ID,
  publicTenant,
  registeredTenant,
  tenantOfInputTopicName,
  type PublicTenantSettings,
  type Tenant,
  type TenantEntry,
} from '../domain/tenants.js';
import type { Clock, Logger } from './ports/process.js';
import type { TenantDirectory, TenantLookup, TenantRegistryReads, WantedTenants } from './ports/tenants.js';

/**
 * Most keys (tenants and accounts) kept in memory: the registry's size and then some. Accounts
 * are named by any client of the public tenant, so what is kept is bounded; a key dropped is
 * read again when next asked for.
 */
export const REGISTRY_CACHE_MAX_KEYS = 250_000;

/**
 * The registry kept as data, read through a cache: each tenant, the public tenant's settings and
 * each account's owners are answered from memory for `maxAgeMs` after they were read (a tenant
 * not registered too), then read again. A change to the registry is in force in every function
 * `maxAgeMs` after it is written, at most. A read that fails keeps what was read before, however
 * old: a brief outage of the table never refuses a registered tenant's request as unknown. What
 * was never read and cannot be read fails the batch, to be retried.
 */
export class CachedTenantDirectory implements TenantDirectory {
  private readonly entries: ReadThrough<TenantEntry | null>;
  private readonly publicSettings: ReadThrough<PublicTenantSettings>;
  private readonly owners: ReadThrough<readonly string[]>;

  constructor(
    private readonly reads: TenantRegistryReads,
    private readonly options: { readonly topicPrefix: string; readonly maxAgeMs: number; readonly clock: Clock; readonly logger: Logger },
  ) {
    const readThrough = <V>(what: string, read: (keys: readonly string[]) => Promise<ReadonlyMap<string, V>>, missing: V) =>
      new ReadThrough<V>(what, read, missing, options);
    this.entries = readThrough('tenants', (ids) => reads.entries(ids), null);
    this.publicSettings = readThrough('public tenant', async () => new Map([[PUBLIC_TENANT_ID, await reads.publicSettings()]]), {});
    this.owners = readThrough('accounts', (accounts) => reads.owners(accounts), []);
  }

  async lookup(wanted: WantedTenants): Promise<TenantLookup> {
    const ids = new Set(wanted.ids ?? []);
    for (const topicArn of wanted.topicArns ?? []) {
      const id = this.tenantOfTopic(topicArn);
      if (id !== undefined) ids.add(id);
    }
    const registered = [...ids].filter((id) => id !== PUBLIC_TENANT_ID);
    const [entries, settings, owners] = await Promise.all([
      this.entries.get(registered),
      this.publicSettings.get(ids.has(PUBLIC_TENANT_ID) ? [PUBLIC_TENANT_ID] : []),
      this.owners.get(wanted.accounts ?? []),
    ]);
    const tenants = new Map<string, Tenant>();
    const publicOnes = settings.get(PUBLIC_TENANT_ID);
    if (publicOnes !== undefined) tenants.set(PUBLIC_TENANT_ID, publicTenant(publicOnes, publicAccountLookup(publicOnes, owners)));
    for (const [id, entry] of entries) {
      if (entry === null) continue;
      // An account no one asked about is checked when the tenant is registered: targetAccounts never holds another tenant's own.
      tenants.set(
        id,
        registeredTenant(entry, { has: (account) => !entry.accounts.includes(account) && (owners.get(account)?.length ?? 0) > 0 }),
      );
    }
    return {
      tenant: (id) => tenants.get(id),
      forTopic: (topicArn) => {
        const id = this.tenantOfTopic(topicArn);
        return id === undefined ? undefined : tenants.get(id);
      },
    };
  }

  ids(): Promise<readonly string[]> {
    return this.reads.ids().then((ids) => [PUBLIC_TENANT_ID, ...ids]);
  }

  private tenantOfTopic(topicArn: string): string | undefined {
    const name = topicArn.split(':')[5];
    return name === undefined ? undefined : tenantOfInputTopicName(this.options.topicPrefix, name);
  }
}

/**
 * Registered tenants' own accounts, as far as the public tenant needs them: when it may target
 * any account, every account its batch names was looked up (see batchTenants), and one that was
 * not is a fault of the caller, not an account to let through.
 */
function publicAccountLookup(settings: PublicTenantSettings, owners: ReadonlyMap<string, readonly string[]>) {
  return {
    has(account: string): boolean {
      const owning = owners.get(account);
      if (owning !== undefined) return owning.length > 0;
      if (settings.targetAccounts === undefined) throw new Error(`account ${account} was not looked up in the registry`);
      return false;
    },
  };
}

/** When a key was read, and what was found (`missing` when nothing was). */
interface Kept<V> {
  readonly value: V;
  readonly readAt: number;
}

/**
 * Values read by key in batches, answered from memory while younger than `maxAgeMs`. Keys
 * asked for while being read wait for that read rather than making another.
 */
class ReadThrough<V> {
  private readonly kept = new LRUCache<string, Kept<V>>({ max: REGISTRY_CACHE_MAX_KEYS });
  private readonly reading = new Map<string, Promise<void>>();

  constructor(
    private readonly what: string,
    private readonly read: (keys: readonly string[]) => Promise<ReadonlyMap<string, V>>,
    private readonly missing: V,
    private readonly options: { readonly maxAgeMs: number; readonly clock: Clock; readonly logger: Logger },
  ) {}

  async get(keys: readonly string[]): Promise<ReadonlyMap<string, V>> {
    const now = this.options.clock.now();
    const waits = new Set<Promise<void>>();
    const unread: string[] = [];
    const ageing: string[] = [];
    // What is young enough is answered as it stands now, whatever a read in the background brings.
    const found = new Map<string, V>();
    for (const key of new Set(keys)) {
      const kept = this.kept.get(key);
      const age = kept === undefined ? Number.POSITIVE_INFINITY : now - kept.readAt;
      const reading = this.reading.get(key);
      if (kept !== undefined && age < this.options.maxAgeMs) {
        found.set(key, kept.value);
        // Read again ahead, in the background, once half the bound has passed: a busy key is never
        // waited for, and what is answered is never older than the bound.
        if (age >= this.options.maxAgeMs / 2 && reading === undefined) ageing.push(key);
        continue;
      }
      if (reading === undefined) unread.push(key);
      else waits.add(reading);
    }
    if (ageing.length > 0) void this.readNow(ageing, now);
    if (unread.length > 0) waits.add(this.readNow(unread, now));
    await Promise.all(waits);
    for (const key of keys) {
      if (found.has(key)) continue;
      const kept = this.kept.get(key);
      if (kept === undefined) throw new TransientError(`the tenant registry could not be read (${this.what}: ${key})`);
      found.set(key, kept.value);
    }
    return found;
  }

  private readNow(keys: readonly string[], startedAt: number): Promise<void> {
    const reading = this.read(keys).then(
      (values) => {
        // Dated when the read began: what it found may be that old.
        for (const key of keys) this.kept.set(key, { value: values.get(key) ?? this.missing, readAt: startedAt });
      },
      (error: unknown) => {
        this.options.logger.warn(
          { err: error, keys: keys.length },
          `the tenant registry could not be read (${this.what}); what was read before stays in force`,
        );
      },
    );
    const settled = reading.finally(() => {
      for (const key of keys) if (this.reading.get(key) === settled) this.reading.delete(key);
    });
    for (const key of keys) this.reading.set(key, settled);
    return settled;
  }
}
