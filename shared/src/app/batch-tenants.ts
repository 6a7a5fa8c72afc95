import type { DelayQueueMessage } from '../domain/messages.js';
import type { Tenant } from '../domain/tenants.js';
import { topicAccount } from '../domain/topic-arn.js';
import type { TenantDirectory, TenantLookup, WantedTenants } from './ports/tenants.js';

/**
 * A batch's tenants, read once for the batch: first by the ids and topics it names, then, only
 * where one of them may target any account (the public tenant, unless restricted), with the
 * accounts of the topics its items name, so that another tenant's own account is known as such.
 */
export async function batchTenants<T>(
  directory: TenantDirectory,
  wanted: WantedTenants,
  items: readonly T[],
  owner: (item: T, tenants: TenantLookup) => Tenant | undefined,
  topicsNamed: (item: T) => readonly (string | undefined)[],
): Promise<TenantLookup> {
  const tenants = await directory.lookup(wanted);
  const accounts = new Set<string>();
  for (const item of items) {
    const tenant = owner(item, tenants);
    if (tenant === undefined || tenant.targetAccounts !== undefined) continue;
    for (const topic of topicsNamed(item)) {
      const account = topic === undefined ? undefined : topicAccount(topic);
      if (account !== undefined) accounts.add(account);
    }
  }
  return accounts.size === 0 ? tenants : directory.lookup({ ...wanted, accounts: [...accounts] });
}

/** One tenant, with what the registry says of the accounts of the topics its work names (see batchTenants). */
export async function lookUpTenant(
  directory: TenantDirectory,
  id: string,
  topicsNamed: readonly (string | undefined)[],
): Promise<Tenant | undefined> {
  const tenants = await batchTenants(
    directory,
    { ids: [id] },
    [topicsNamed],
    (_topics, found) => found.tenant(id),
    (topics) => topics,
  );
  return tenants.tenant(id);
}

/** The tenants of a delay-queue batch's events and notices, with the accounts their topics are in (see batchTenants). */
export function delayQueueTenants(directory: TenantDirectory, messages: readonly (DelayQueueMessage | Error)[]): Promise<TenantLookup> {
  const owned = messages.flatMap((message) => {
    if (message instanceof Error) return [];
    if (message.kind === 'event') return [{ tenant: message.event.tenant, topics: [message.event.target, message.event.failureTopic] }];
    const notices = message.kind === 'notice' ? [message] : message.kind === 'notices' ? message.notices : [];
    return notices.flatMap((notice) => (notice.tenant === undefined ? [] : [{ tenant: notice.tenant, topics: [notice.failureTopic] }]));
  });
  return batchTenants(
    directory,
    { ids: [...new Set(owned.map(({ tenant }) => tenant))] },
    owned,
    ({ tenant }, found) => found.tenant(tenant),
    ({ topics }) => topics,
  );
}
