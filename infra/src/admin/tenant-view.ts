import { TenantRegistry, type Pause, type Tenant, type TenantEntry } from '@adhoc-scheduler/shared';
import { count, fields, printable, table } from './format.js';

/** A registered tenant with the defaults applied, as the service sees it. */
export function asTenant(entry: TenantEntry): Tenant {
  const tenant = new TenantRegistry({ tenants: [entry] }, '').tenant(entry.id);
  if (tenant === undefined) throw new Error(`tenant ${entry.id} missing from its own registry`);
  return tenant;
}

/** A tenant as the listing shows it, with its input topic when the service's outputs are known. */
export interface TenantView {
  readonly tenant: Tenant;
  readonly inputTopicArn: string | undefined;
  /** Its pause, if paused; undefined also when the pauses could not be read (the listing says so). */
  readonly pause?: Pause | undefined;
}

/** A pause in words: whose (an operator's, which the tenant cannot lift, or the tenant's own request), since when, and why. */
export function pauseText(pause: Pause): string {
  const by = pause.owner === 'operator' ? `by ${printable(pause.pausedBy)}` : `by the tenant (request ${printable(pause.pausedBy)})`;
  return `${by} since ${new Date(pause.pausedAt).toISOString()}${pause.note ? `: ${printable(pause.note)}` : ''}`;
}

/** Accounts whose topics it may target beyond its own (registered tenants always may target their own). */
function extraTargets(tenant: Tenant): string[] {
  return [...(tenant.targetAccounts ?? [])].filter((account) => !tenant.accounts.includes(account));
}

function targetsText(tenant: Tenant): string {
  // Never a registered tenant's accounts.
  if (tenant.targetAccounts === undefined) return "any but tenants'";
  if (tenant.accounts.length === 0) return [...tenant.targetAccounts].join(',') || 'none';
  const extra = extraTargets(tenant);
  return extra.length === 0 ? 'own' : `own,${extra.join(',')}`;
}

/** One sentence: what a tenant may do. */
export function tenantSettingsText(tenant: Tenant): string {
  const extra = extraTargets(tenant);
  return [
    `accounts ${tenant.accounts.join(', ')}`,
    ...(extra.length > 0 ? [`may also target ${extra.join(', ')}`] : []),
    ...(tenant.deadLetterTopic !== undefined ? [`dead-letter topic ${tenant.deadLetterTopic}`] : []),
    `at most ${count(tenant.quotas.maxOpenEvents)} open events, ${count(tenant.quotas.maxIngestPerSecond)} new events per second and ${count(tenant.quotas.maxControlPerSecond)} control requests per second`,
    ...(tenant.requireUser ? [] : ['requests may leave out user']),
  ].join('; ');
}

export function tenantsTable(views: readonly TenantView[]): string {
  return table([
    ['TENANT', 'ACCOUNTS', 'TARGETS', 'MAX OPEN EVENTS', 'MAX NEW/S', 'MAX CONTROL/S', 'INPUT TOPIC', 'DEAD-LETTER TOPIC', 'PAUSED'],
    ...views.map(({ tenant, inputTopicArn, pause }) => [
      tenant.enabled ? tenant.id : `${tenant.id} (disabled)`,
      tenant.accounts.join(',') || '-',
      targetsText(tenant),
      count(tenant.quotas.maxOpenEvents),
      count(tenant.quotas.maxIngestPerSecond),
      count(tenant.quotas.maxControlPerSecond),
      inputTopicArn ?? '-',
      tenant.deadLetterTopic ?? '-',
      pause === undefined ? '-' : pauseText(pause),
    ]),
  ]);
}

/** One tenant as the JSON of tenant list and tenant show gives it. */
export function tenantJson({ tenant, inputTopicArn, pause }: TenantView): Record<string, unknown> {
  return {
    id: tenant.id,
    enabled: tenant.enabled,
    accounts: tenant.accounts,
    // null: any account but the registered tenants'.
    targetAccounts: tenant.targetAccounts === undefined ? null : [...tenant.targetAccounts],
    maxOpenEvents: tenant.quotas.maxOpenEvents,
    maxIngestPerSecond: tenant.quotas.maxIngestPerSecond,
    maxControlPerSecond: tenant.quotas.maxControlPerSecond,
    requireUser: tenant.requireUser,
    inputTopicArn: inputTopicArn ?? null,
    deadLetterTopic: tenant.deadLetterTopic ?? null,
    // null: not paused (or its pause could not be read: the command says so on stderr).
    paused:
      pause === undefined
        ? null
        : { since: new Date(pause.pausedAt).toISOString(), note: pause.note ?? null, by: pause.pausedBy, owner: pause.owner },
  };
}

export function tenantsJson(views: readonly TenantView[]): Record<string, unknown> {
  return { tenants: views.map(tenantJson) };
}

/** One tenant, a line per setting, for tenant show; `openEvents` as its quota counter says it. */
export function tenantDetailText(view: TenantView, openEvents: string): string {
  const { tenant, inputTopicArn, pause } = view;
  return fields([
    ['tenant', tenant.enabled ? tenant.id : `${tenant.id} (disabled)`],
    ['accounts', tenant.accounts.join(', ') || '-'],
    ['may target', targetsText(tenant)],
    ['max open events', count(tenant.quotas.maxOpenEvents)],
    ['max new events/s', count(tenant.quotas.maxIngestPerSecond)],
    ['max control/s', count(tenant.quotas.maxControlPerSecond)],
    ['user', tenant.requireUser ? 'required' : 'optional'],
    ['series occurrences/min', count(tenant.seriesOccurrencesPerMinute)],
    ['dead-letter topic', tenant.deadLetterTopic ?? '-'],
    ['input topic', inputTopicArn ?? '-'],
    ['paused', pause === undefined ? '-' : pauseText(pause)],
    ['open events', `${openEvents} (its quota counter; scripts/admin quota reconcile recounts)`],
  ]);
}
