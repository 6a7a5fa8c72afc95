import { Ajv } from 'ajv';
import schema from '../../schema/tenants.schema.json' with { type: 'json' };

/** The tenant of the shared input topic: the original service's open entry point. */
export const PUBLIC_TENANT_ID = 'public';

export const DEFAULT_QUOTAS = {
  maxOpenEvents: 1_000_000,
  maxIngestPerSecond: 5_000,
} as const;

export interface Quotas {
  /** Most events scheduled and not yet ended at once. */
  readonly maxOpenEvents: number;
  /** Most new events accepted per second. */
  readonly maxIngestPerSecond: number;
}

export interface Tenant {
  readonly id: string;
  /** Accounts that may publish to the tenant's input topic (empty for the public tenant: its topic decides). */
  readonly accounts: readonly string[];
  /** Accounts whose topics the tenant may name as target or failure topic; undefined: any account. */
  readonly targetAccounts: ReadonlySet<string> | undefined;
  readonly quotas: Quotas;
  /** Only the public tenant can be disabled; registered tenants are removed from the registry instead. */
  readonly enabled: boolean;
}

/** The operator's registry as written (tenants file, CDK props); see shared/schema/tenants.schema.json. */
export interface TenantsDocument {
  readonly public?: {
    readonly enabled?: boolean;
    readonly targetAccounts?: readonly string[];
    readonly maxOpenEvents?: number;
    readonly maxIngestPerSecond?: number;
  };
  readonly tenants?: readonly {
    readonly id: string;
    readonly accounts: readonly string[];
    readonly targetAccounts?: readonly string[];
    readonly maxOpenEvents?: number;
    readonly maxIngestPerSecond?: number;
  }[];
}

export class TenantsDocumentError extends Error {
  override readonly name = 'TenantsDocumentError';
}

const validateDocument = new Ajv({ allErrors: true, strict: true }).compile<TenantsDocument>(schema);

/** Checks a registry against the schema and for duplicate ids; throws a TenantsDocumentError saying what is wrong. */
export function parseTenantsDocument(value: unknown): TenantsDocument {
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
  return value;
}

/** Input topic names: `<prefix>-input` is the public tenant's, `<prefix>-tenant-<id>` each registered tenant's. */
export function inputTopicName(topicPrefix: string, tenantId: string): string {
  return tenantId === PUBLIC_TENANT_ID ? `${topicPrefix}-input` : `${topicPrefix}-tenant-${tenantId}`;
}

/** The account of an SNS topic ARN (`arn:aws:sns:<region>:<account>:<name>`). */
function topicAccount(topicArn: string): string | undefined {
  return topicArn.split(':')[4];
}

/** Whether the tenant may have the scheduler publish to this topic (as target or failure topic). */
export function mayPublishTo(tenant: Tenant, topicArn: string): boolean {
  const account = topicAccount(topicArn);
  return tenant.targetAccounts === undefined || (account !== undefined && tenant.targetAccounts.has(account));
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
    const publicSettings = document.public ?? {};
    const tenants: Tenant[] = [
      {
        id: PUBLIC_TENANT_ID,
        accounts: [],
        targetAccounts: publicSettings.targetAccounts ? new Set(publicSettings.targetAccounts) : undefined,
        quotas: quotasOf(publicSettings),
        enabled: publicSettings.enabled ?? true,
      },
      ...(document.tenants ?? []).map((entry) => ({
        id: entry.id,
        accounts: entry.accounts,
        targetAccounts: new Set([...entry.accounts, ...(entry.targetAccounts ?? [])]),
        quotas: quotasOf(entry),
        enabled: true,
      })),
    ];
    for (const tenant of tenants) {
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
}

function quotasOf(entry: { readonly maxOpenEvents?: number; readonly maxIngestPerSecond?: number }): Quotas {
  return {
    maxOpenEvents: entry.maxOpenEvents ?? DEFAULT_QUOTAS.maxOpenEvents,
    maxIngestPerSecond: entry.maxIngestPerSecond ?? DEFAULT_QUOTAS.maxIngestPerSecond,
  };
}
