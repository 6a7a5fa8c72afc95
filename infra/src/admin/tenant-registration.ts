import {
  sameEntry,
  parseTenantsDocument,
  TenantsDocumentError,
  type RegistryScope,
  type TenantEntry,
  type TenantsDocument,
} from '@adhoc-scheduler/shared';
import { wholeNumber } from './arguments.js';
import { AdminError, AdminUsageError } from './errors.js';
import type { Output } from './format.js';
import type { TenantPlace } from './tenant-place.js';
import { clearRemovals, removalsToClear } from './tenant-removal.js';
import { asTenant, tenantSettingsText } from './tenant-view.js';

/** A tenant's entry in the registry, as the tenants file holds it; and writing one, for tenant add and tenant update. */

/** The flag each field of a tenant entry comes from, to say which one the schema refused. */
const FLAG_OF_FIELD: Readonly<Record<string, string>> = {
  id: 'the tenant id',
  accounts: '--account',
  targetAccounts: '--target-account',
  deadLetterTopic: '--dead-letter-topic',
  maxOpenEvents: '--max-open-events',
  maxIngestPerSecond: '--max-ingest-per-second',
  maxControlPerSecond: '--max-control-per-second',
  requireUser: '--user-optional',
};

/** Checks one entry against the registry schema and on its own; an AdminError naming the flags at fault. */
export function validateEntry(entry: TenantEntry): void {
  try {
    parseTenantsDocument({ tenants: [entry] });
  } catch (error) {
    if (!(error instanceof TenantsDocumentError)) throw error;
    const problems = error.message
      .replace(/^invalid tenants: /, '')
      .replace(/\/tenants\/0\/(\w+)(?:\/(\d+))?/g, (_path, field: string, index: string | undefined) => {
        const flag = FLAG_OF_FIELD[field] ?? field;
        const given: unknown = (entry as unknown as Record<string, unknown>)[field];
        const value = index === undefined ? given : Array.isArray(given) ? (given as unknown[])[Number(index)] : undefined;
        return value === undefined ? flag : `${flag} ${JSON.stringify(value)}`;
      });
    throw new AdminError(`tenant "${entry.id}" is not valid: ${problems}`);
  }
}

/**
 * Checks the registry a change makes (accounts, and dead-letter topics as the service knows
 * them); an AdminError saying what (`tenant "acme"`) cannot be registered so, and why.
 */
export function validateRegistry(document: TenantsDocument, what: string, scope: RegistryScope): void {
  try {
    parseTenantsDocument(document, scope);
  } catch (error) {
    if (!(error instanceof TenantsDocumentError)) throw error;
    throw new AdminError(`${what} cannot be registered so: ${error.message.replace(/^invalid tenants: /, '')}`);
  }
}

/** The flags of tenant add and tenant update that say a tenant's settings. */
export interface EntryFlags {
  readonly account: readonly string[];
  readonly 'target-account': readonly string[];
  readonly 'dead-letter-topic'?: string | undefined;
  readonly 'max-open-events'?: string | undefined;
  readonly 'max-ingest-per-second'?: string | undefined;
  readonly 'max-control-per-second'?: string | undefined;
  readonly 'user-optional': boolean;
  readonly 'user-required'?: boolean;
}

/** The registry entry tenant add's flags say: exactly that, the omitted settings left to their defaults. */
export function entryFromFlags(id: string, values: EntryFlags, command: string): TenantEntry {
  if (values.account.length === 0) throw new AdminUsageError('--account is missing: a tenant has at least one AWS account', command);
  const quota = (flag: 'max-open-events' | 'max-ingest-per-second' | 'max-control-per-second') => {
    const text = values[flag];
    return text === undefined ? undefined : wholeNumber(`--${flag}`, text, { min: 0 }, command);
  };
  const maxOpenEvents = quota('max-open-events');
  const maxIngestPerSecond = quota('max-ingest-per-second');
  const maxControlPerSecond = quota('max-control-per-second');
  return {
    id,
    accounts: values.account,
    ...(values['target-account'].length > 0 ? { targetAccounts: values['target-account'] } : {}),
    ...(values['dead-letter-topic'] !== undefined ? { deadLetterTopic: values['dead-letter-topic'] } : {}),
    ...(maxOpenEvents !== undefined ? { maxOpenEvents } : {}),
    ...(maxIngestPerSecond !== undefined ? { maxIngestPerSecond } : {}),
    ...(maxControlPerSecond !== undefined ? { maxControlPerSecond } : {}),
    ...(values['user-optional'] ? { requireUser: false } : {}),
  };
}

/**
 * The entry tenant update's flags make of a registered one: each setting a flag gives replaced,
 * every other kept as it is (entryFromFlags leaves out the settings whose flag is not given).
 */
export function updatedEntry(previous: TenantEntry, values: EntryFlags, command: string): TenantEntry {
  if (values['user-optional'] && values['user-required'] === true)
    throw new AdminUsageError('give --user-optional or --user-required, not both', command);
  const accounts = values.account.length > 0 ? values.account : previous.accounts;
  const { requireUser: _fromFlags, ...given } = entryFromFlags(previous.id, { ...values, account: accounts }, command);
  const updated: TenantEntry = { ...previous, ...given };
  if (values['user-optional']) return { ...updated, requireUser: false };
  if (values['user-required'] !== true) return updated;
  const { requireUser: _optional, ...required } = updated;
  return required;
}

/** What registering a tenant did. */
export interface Registered {
  /** Its input topic, where its clients publish. */
  readonly topicArn: string;
  /** The entry it replaced; undefined: the tenant is new. */
  readonly previous: TenantEntry | undefined;
  /** Why the tenant may schedule nothing there, where the place can tell (the local service's one account). */
  readonly warning: string | undefined;
}

/**
 * Registers a tenant, or replaces its entry, at a place (the running local service, or a deployed
 * stack): checks the entry and the registry it makes (an AdminError saying why, and nothing
 * written), refuses a removed id unless `restore`, creates (or finds) its input topic, then writes
 * the registry. What tenant add and tenant update do, for an operator's own code too.
 */
export async function registerTenant(entry: TenantEntry, place: TenantPlace, options: { readonly restore: boolean }): Promise<Registered> {
  validateEntry(entry);
  const id = entry.id;
  const registry = await place.readRegistry();
  const previous = registry.tenants?.find((tenant) => tenant.id === id);
  const updated: TenantsDocument = {
    ...registry,
    tenants:
      previous === undefined
        ? [...(registry.tenants ?? []), entry]
        : (registry.tenants ?? []).map((tenant) => (tenant.id === id ? entry : tenant)),
  };
  validateRegistry(updated, `tenant "${id}"`, await place.scope());
  const removed = await removalsToClear(place.location, [id], options.restore);
  // The topic first: until the registry names the tenant, the service refuses what arrives on
  // it, and its ARN is told only once both are done.
  const topicArn = await place.ensureTenantTopic(entry);
  if (previous === undefined || !sameEntry(previous, entry)) await place.writeRegistry(registry, updated);
  await clearRemovals(place.location, removed);
  await place.topicsRegistered({ [id]: topicArn });
  return { topicArn, previous, warning: await place.targetWarning(entry) };
}

/** Registers a tenant as registerTenant does and says what changed: the topic's ARN on stdout. */
export async function registerEntry(entry: TenantEntry, place: TenantPlace, restore: boolean, output: Output): Promise<number> {
  const { topicArn, previous, warning } = await registerTenant(entry, place, { restore });
  const id = entry.id;
  const settings = tenantSettingsText(asTenant(entry));
  if (previous === undefined) output.err(`Tenant ${id} registered in ${place.registryName}: ${settings}.`);
  else if (sameEntry(previous, entry)) output.err(`Tenant ${id} is registered already with these settings; nothing changed.`);
  else
    output.err(
      `Tenant ${id} was registered already; its settings are updated.\n  was: ${tenantSettingsText(asTenant(previous))}\n  now: ${settings}`,
    );
  if (warning !== undefined) output.err(warning);
  output.err('Its input topic (publish schedule requests there):');
  output.out(topicArn);
  return 0;
}
