import { Ajv } from 'ajv';
import schema from '../../schema/tenants.schema.json' with { type: 'json' };
import { isSchedulerTopic, type SchedulerTopics } from './scheduler-topics.js';
import { topicAccount, topicRegion } from './topic-arn.js';

/** The tenant of the shared input topic: the original service's open entry point. */
export const PUBLIC_TENANT_ID = 'public';

/**
 * A tenant's quotas where its entry sets none; the public tenant's too, but for its control
 * requests (DEFAULT_PUBLIC_MAX_CONTROL_PER_SECOND).
 *
 * `maxControlPerSecond` counts cancels, reschedules, pauses, resumes, cancels by label and a
 * series' changes. Each costs the table more than a new event (a cancel is a transaction of two
 * writes, a cancel by label a job that writes every event it reaches), and clients send far fewer
 * of them: a fifth of the rate of new events leaves room for any client cancelling or moving its
 * own events, and bounds what a client looping on them costs everyone else.
 */
export const DEFAULT_QUOTAS = {
  maxOpenEvents: 1_000_000,
  maxIngestPerSecond: 5_000,
  maxControlPerSecond: 1_000,
} as const;

/**
 * Strict on the shared topic: open to anyone, whose cancels and reschedules name events only by
 * their `m-` ids (and which takes no pause, resume or cancel by label). Enough for publishers
 * cancelling their own events, not for a flood of guessed ids.
 */
export const DEFAULT_PUBLIC_MAX_CONTROL_PER_SECOND = 100;

/**
 * Most occurrences one series is delivered in a minute (see materialisation in series.ts): on
 * time, one a minute at most, and late ones caught up after an outage. Strict on the shared
 * topic, open to anyone: one on time and one caught up.
 */
export const DEFAULT_SERIES_OCCURRENCES_PER_MINUTE = { registered: 10, public: 2 } as const;

export interface Quotas {
  /** Most events scheduled and not yet ended at once. */
  readonly maxOpenEvents: number;
  /** Most new events accepted per second. */
  readonly maxIngestPerSecond: number;
  /** Most control requests (cancel, reschedule, pause, resume, cancel by label, a series' change) accepted per second. */
  readonly maxControlPerSecond: number;
}

/** Accounts asked about one at a time: a registry of many tenants keeps one index of them, not a set per tenant. */
export interface AccountLookup {
  has(account: string): boolean;
}

export interface Tenant {
  readonly id: string;
  /** The tenant's own accounts: the only ones that may publish to its input topic (empty for the public tenant: its topic decides). */
  readonly accounts: readonly string[];
  /** Accounts whose topics the tenant may name as target or failure topic (its own included); undefined: any account. */
  readonly targetAccounts: ReadonlySet<string> | undefined;
  /** The other registered tenants' own accounts: never reachable from this tenant, whatever `targetAccounts` says. */
  readonly otherTenantsAccounts: AccountLookup;
  /** Where notices go that have no usable failure topic; undefined: the logs only. */
  readonly deadLetterTopic: string | undefined;
  readonly quotas: Quotas;
  /** Only the public tenant can be disabled; registered tenants are removed from the registry instead. */
  readonly enabled: boolean;
  /** Whether a schedule request must name its `user` (the original service's ENFORCE_USER); true unless the registry says otherwise. */
  readonly requireUser: boolean;
  /** Most occurrences one of its series is delivered in a minute (see DEFAULT_SERIES_OCCURRENCES_PER_MINUTE). */
  readonly seriesOccurrencesPerMinute: number;
}

/** The operator's registry as written (tenants file, CDK props); see shared/schema/tenants.schema.json. */
export interface TenantsDocument {
  readonly public?: {
    readonly enabled?: boolean;
    readonly targetAccounts?: readonly string[];
    readonly deadLetterTopic?: string;
    readonly maxOpenEvents?: number;
    readonly maxIngestPerSecond?: number;
    readonly maxControlPerSecond?: number;
    readonly requireUser?: boolean;
    readonly seriesOccurrencesPerMinute?: number;
  };
  readonly tenants?: readonly {
    readonly id: string;
    readonly accounts: readonly string[];
    readonly targetAccounts?: readonly string[];
    readonly deadLetterTopic?: string;
    readonly maxOpenEvents?: number;
    readonly maxIngestPerSecond?: number;
    readonly maxControlPerSecond?: number;
    readonly requireUser?: boolean;
    readonly seriesOccurrencesPerMinute?: number;
  }[];
}

export class TenantsDocumentError extends Error {
  override readonly name = 'TenantsDocumentError';
}

const validateDocument = new Ajv({ allErrors: true, strict: true }).compile<TenantsDocument>(schema);

/** What the registry check knows of the scheduler where it runs; what it does not know, it does not check. */
export interface RegistryScope {
  /** The scheduler's region: dead-letter topics must be in it. */
  readonly region?: string | undefined;
  /** The scheduler's own topics: never a dead-letter topic. */
  readonly schedulerTopics?: SchedulerTopics | undefined;
}

/**
 * Checks a registry against the schema, for duplicate ids, for accounts granted to one tenant
 * that are another's own, and for dead-letter topics a tenant may not publish to (or, as far as
 * the scope tells, in another region or one of the scheduler's own topics); throws a
 * TenantsDocumentError saying what is wrong.
 */
export function parseTenantsDocument(value: unknown, scope: RegistryScope = {}): TenantsDocument {
  if (!validateDocument(value)) {
    // An unknown key is named, so a misspelt one is found without reading the schema.
    const unknownKey = (e: { readonly params: Record<string, unknown> }) =>
      typeof e.params.additionalProperty === 'string' ? ` ("${e.params.additionalProperty}")` : '';
    const errors = (validateDocument.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}${unknownKey(e)}`);
    throw new TenantsDocumentError(`invalid tenants: ${errors.join('; ')}`);
  }
  const seen = new Set<string>();
  for (const { id } of value.tenants ?? []) {
    if (seen.has(id)) throw new TenantsDocumentError(`invalid tenants: "${id}" is registered twice`);
    seen.add(id);
  }
  const owners = ownersByAccount(value);
  const problems = [...grantsOfOwnedAccounts(value, owners), ...unusableDeadLetterTopics(value, owners, scope)];
  if (problems.length > 0) throw new TenantsDocumentError(`invalid tenants: ${problems.join('; ')}`);
  return value;
}

function described(tenantId: string): string {
  return tenantId === PUBLIC_TENANT_ID ? 'the public tenant' : `tenant "${tenantId}"`;
}

/** The registered tenants owning each account, in registry order: one index, so checking a registry of many tenants stays linear. */
export function ownersByAccount(document: TenantsDocument): ReadonlyMap<string, readonly string[]> {
  const owners = new Map<string, string[]>();
  for (const { id, accounts } of document.tenants ?? []) {
    for (const account of accounts) {
      const ids = owners.get(account);
      if (ids === undefined) owners.set(account, [id]);
      else if (!ids.includes(id)) ids.push(id);
    }
  }
  return owners;
}

/** The registered tenant, other than `tenantId`, whose own account this is. */
function ownerOf(owners: ReadonlyMap<string, readonly string[]>, account: string, tenantId: string): string | undefined {
  return owners.get(account)?.find((id) => id !== tenantId);
}

/** `targetAccounts` naming another tenant's own account: that would hand one tenant's topics to another. */
function grantsOfOwnedAccounts(document: TenantsDocument, owners: ReadonlyMap<string, readonly string[]>): string[] {
  const grants = [
    { id: PUBLIC_TENANT_ID, own: [] as readonly string[], targetAccounts: document.public?.targetAccounts ?? [] },
    ...(document.tenants ?? []).map((entry) => ({ id: entry.id, own: entry.accounts, targetAccounts: entry.targetAccounts ?? [] })),
  ];
  return grants.flatMap(({ id, own, targetAccounts }) =>
    targetAccounts.flatMap((account) => {
      const owner = own.includes(account) ? undefined : ownerOf(owners, account, id);
      return owner === undefined ? [] : [`${described(id)} lists ${account} in targetAccounts, but it is an account of tenant "${owner}"`];
    }),
  );
}

function unusableDeadLetterTopics(
  document: TenantsDocument,
  owners: ReadonlyMap<string, readonly string[]>,
  { region, schedulerTopics }: RegistryScope,
): string[] {
  return tenantsOf(document, owners).flatMap((tenant) => {
    const topic = tenant.deadLetterTopic;
    if (topic === undefined) return [];
    // The scheduler publishes nothing to its own topics: a notice there would be taken as a request, or raise an alarm.
    if (schedulerTopics !== undefined && isSchedulerTopic(topic, schedulerTopics)) {
      return [`${described(tenant.id)}'s deadLetterTopic ${topic} is one of the scheduler's own topics`];
    }
    const problems: string[] = [];
    if (!mayPublishTo(tenant, topic)) {
      const account = topicAccount(topic) ?? '';
      const owner = ownerOf(owners, account, tenant.id);
      problems.push(
        `${described(tenant.id)}'s deadLetterTopic ${topic} is in account ${account}, ${owner === undefined ? 'which it may not publish to' : `an account of tenant "${owner}"`}`,
      );
    }
    if (region !== undefined && topicRegion(topic) !== region) {
      problems.push(`${described(tenant.id)}'s deadLetterTopic ${topic} is not in the scheduler's region ${region}`);
    }
    return problems;
  });
}

/** Input topic names: `<prefix>-input` is the public tenant's, `<prefix>-tenant-<id>` each registered tenant's. */
export function inputTopicName(topicPrefix: string, tenantId: string): string {
  return tenantId === PUBLIC_TENANT_ID ? `${topicPrefix}-input` : `${topicPrefix}-tenant-${tenantId}`;
}

/**
 * Whether the tenant may have the scheduler publish to this topic (as target, failure topic or
 * dead-letter topic): always to its own accounts, never to another registered tenant's, and to
 * any other account its `targetAccounts` allows.
 */
export function mayPublishTo(tenant: Tenant, topicArn: string): boolean {
  const account = topicAccount(topicArn);
  if (account === undefined) return false;
  if (tenant.accounts.includes(account)) return true;
  if (tenant.otherTenantsAccounts.has(account)) return false;
  return tenant.targetAccounts === undefined || tenant.targetAccounts.has(account);
}

/** A registered tenant's entry in the registry, as written. */
export type TenantEntry = NonNullable<TenantsDocument['tenants']>[number];

/** The public tenant's settings in the registry, as written. */
export type PublicTenantSettings = NonNullable<TenantsDocument['public']>;

/** Every tenant of a registry, the public one first, with the defaults applied. */
function tenantsOf(document: TenantsDocument, owners: ReadonlyMap<string, readonly string[]> = ownersByAccount(document)): Tenant[] {
  return [
    publicTenant(document.public ?? {}, owners),
    // Two tenants may share an account: both own it.
    ...(document.tenants ?? []).map((entry) =>
      registeredTenant(entry, { has: (account: string) => owners.has(account) && !entry.accounts.includes(account) }),
    ),
  ];
}

/** The public tenant with the defaults applied; `registeredAccounts` holds every registered tenant's own accounts. */
export function publicTenant(settings: PublicTenantSettings, registeredAccounts: AccountLookup): Tenant {
  return {
    id: PUBLIC_TENANT_ID,
    accounts: [],
    targetAccounts: settings.targetAccounts ? new Set(settings.targetAccounts) : undefined,
    otherTenantsAccounts: registeredAccounts,
    deadLetterTopic: settings.deadLetterTopic,
    quotas: quotasOf(settings, DEFAULT_PUBLIC_MAX_CONTROL_PER_SECOND),
    enabled: settings.enabled ?? true,
    requireUser: settings.requireUser ?? true,
    seriesOccurrencesPerMinute: settings.seriesOccurrencesPerMinute ?? DEFAULT_SERIES_OCCURRENCES_PER_MINUTE.public,
  };
}

/** A registered tenant with the defaults applied; `otherTenantsAccounts` holds the other registered tenants' own accounts. */
export function registeredTenant(entry: TenantEntry, otherTenantsAccounts: AccountLookup): Tenant {
  return {
    id: entry.id,
    accounts: entry.accounts,
    targetAccounts: new Set([...entry.accounts, ...(entry.targetAccounts ?? [])]),
    otherTenantsAccounts,
    deadLetterTopic: entry.deadLetterTopic,
    quotas: quotasOf(entry, DEFAULT_QUOTAS.maxControlPerSecond),
    enabled: true,
    requireUser: entry.requireUser ?? true,
    seriesOccurrencesPerMinute: entry.seriesOccurrencesPerMinute ?? DEFAULT_SERIES_OCCURRENCES_PER_MINUTE.registered,
  };
}

/** The tenant whose input topic has this name (see inputTopicName); undefined for any other name. */
export function tenantOfInputTopicName(topicPrefix: string, name: string): string | undefined {
  if (name === `${topicPrefix}-input`) return PUBLIC_TENANT_ID;
  const tenantPrefix = `${topicPrefix}-tenant-`;
  return name.startsWith(tenantPrefix) && name.length > tenantPrefix.length ? name.slice(tenantPrefix.length) : undefined;
}

/**
 * Who a message belongs to, from the topic it arrived on (SNS sets that in its envelope; a
 * client cannot). Only the scheduler's own topics feed the ingest queue, so the topic's name
 * is enough to know the tenant.
 */
export class TenantRegistry {
  private readonly byTopicName = new Map<string, Tenant>();
  private readonly byId = new Map<string, Tenant>();

  constructor(document: TenantsDocument, topicPrefix: string) {
    for (const tenant of tenantsOf(document)) {
      this.byId.set(tenant.id, tenant);
      this.byTopicName.set(inputTopicName(topicPrefix, tenant.id), tenant);
    }
  }

  /** The tenant whose input topic this is; undefined for any other topic. */
  forTopic(topicArn: string): Tenant | undefined {
    const name = topicArn.split(':')[5];
    return name === undefined ? undefined : this.byTopicName.get(name);
  }

  tenant(id: string): Tenant | undefined {
    return this.byId.get(id);
  }

  all(): readonly Tenant[] {
    return [...this.byId.values()];
  }

  /** A registry given whole (the functions' configuration, a test's) answers every lookup itself. */
  lookup(): Promise<TenantRegistry> {
    return Promise.resolve(this);
  }

  ids(): Promise<readonly string[]> {
    return Promise.resolve([...this.byId.keys()]);
  }
}

function quotasOf(entry: { readonly [quota in keyof Quotas]?: number }, defaultMaxControlPerSecond: number): Quotas {
  return {
    maxOpenEvents: entry.maxOpenEvents ?? DEFAULT_QUOTAS.maxOpenEvents,
    maxIngestPerSecond: entry.maxIngestPerSecond ?? DEFAULT_QUOTAS.maxIngestPerSecond,
    maxControlPerSecond: entry.maxControlPerSecond ?? defaultMaxControlPerSecond,
  };
}
