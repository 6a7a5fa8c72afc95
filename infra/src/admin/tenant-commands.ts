import {
  mayPublishTo,
  parseTenantsDocument,
  PUBLIC_TENANT_ID,
  TenantRegistry,
  TenantsDocumentError,
  type RegistryScope,
  type Tenant,
  type TenantsDocument,
} from '@adhoc-scheduler/shared';
import { addTenantInputTopics } from '../local/outputs-file.js';
import { writeTenantsFile } from '../local/tenants-file.js';
import { commandLine, LOCATION_OPTIONS, noPositionals, onePositional, wholeNumber } from './arguments.js';
import { describeError } from '@adhoc-scheduler/shared/describe-error';
import { LOCAL_SERVICE_FILES } from '@adhoc-scheduler/shared/local-service-access';
import { AdminError, AdminUsageError } from './errors.js';
import { pageLimit } from './listing-options.js';
import type { Output } from './format.js';
import { inputTopicArnOf } from './topic-arns.js';
import { LocalService, readLocalOutputs } from './local-outputs.js';
import { CDK_TENANTS, localOnly, locationOf, readStackOutputs, type Location } from './location.js';
import { pausesAt } from './pause-commands.js';
import { pageOfTenants, readRegistry } from './registry.js';
import { clearRemovals, removalsToClear } from './tenant-removal.js';
import { tenantSettingsText, tenantsJson, tenantsTable } from './tenant-view.js';
import { LIST_LIMIT, USAGE } from './usage.js';

export type TenantEntry = NonNullable<TenantsDocument['tenants']>[number];

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
function validateEntry(entry: TenantEntry): void {
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

/** The same entry written the same way, whatever the key order in the file. */
export function sameEntry(a: TenantEntry, b: TenantEntry): boolean {
  const canonical = (entry: TenantEntry) =>
    JSON.stringify([
      entry.id,
      entry.accounts,
      entry.targetAccounts ?? [],
      entry.deadLetterTopic ?? null,
      entry.maxOpenEvents ?? null,
      entry.maxIngestPerSecond ?? null,
      entry.maxControlPerSecond ?? null,
      entry.requireUser ?? true,
      entry.seriesOccurrencesPerMinute ?? null,
    ]);
  return canonical(a) === canonical(b);
}

/** A registered tenant with the defaults applied, as the service sees it. */
function asTenant(entry: TenantEntry): Tenant {
  const tenant = new TenantRegistry({ tenants: [entry] }, '').tenant(entry.id);
  if (tenant === undefined) throw new Error(`tenant ${entry.id} missing from its own registry`);
  return tenant;
}

/** The flags of tenant add that say a tenant's entry. */
interface EntryFlags {
  readonly account: string[];
  readonly 'target-account': string[];
  readonly 'dead-letter-topic'?: string | undefined;
  readonly 'max-open-events'?: string | undefined;
  readonly 'max-ingest-per-second'?: string | undefined;
  readonly 'max-control-per-second'?: string | undefined;
  readonly 'user-optional': boolean;
}

/** The registry entry tenant add's flags say: exactly that, the omitted settings left to their defaults. */
function entryFromFlags(id: string, values: EntryFlags, command: string): TenantEntry {
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

export async function tenantAdd(args: string[], output: Output): Promise<number> {
  const command = 'tenant add';
  const line = commandLine(
    command,
    args,
    {
      account: { type: 'string', multiple: true, default: [] },
      'target-account': { type: 'string', multiple: true, default: [] },
      'dead-letter-topic': { type: 'string' },
      'max-open-events': { type: 'string' },
      'max-ingest-per-second': { type: 'string' },
      'max-control-per-second': { type: 'string' },
      'user-optional': { type: 'boolean', default: false },
      restore: { type: 'boolean', default: false },
      tenants: { type: 'string', default: LOCAL_SERVICE_FILES.tenants },
      ...LOCATION_OPTIONS,
    },
    { usage: USAGE.tenantAdd, output },
  );
  if (line === undefined) return 0;
  const { values, positionals } = line;
  const outputsPath = localOnly(locationOf(values, command), command);
  const id = onePositional(positionals, 'the tenant id', command);
  if (id === PUBLIC_TENANT_ID) {
    throw new AdminError(
      `"${PUBLIC_TENANT_ID}" is the shared input topic's tenant, not one to add: its settings are the "public" section of the tenants file`,
    );
  }
  const entry = entryFromFlags(id, values, command);
  validateEntry(entry);

  const tenantsPath = values.tenants;
  const registry = readRegistry(tenantsPath);
  const previous = registry.tenants?.find((tenant) => tenant.id === id);
  const updated: TenantsDocument = {
    ...registry,
    tenants:
      previous === undefined
        ? [...(registry.tenants ?? []), entry]
        : (registry.tenants ?? []).map((tenant) => (tenant.id === id ? entry : tenant)),
  };

  // The topic first: until the file names the tenant, the service refuses what arrives on it,
  // and its ARN is printed only once both are done. A service that is not running stops this
  // before anything is written.
  const service = await LocalService.connect(outputsPath);
  const location: Location = { kind: 'local', outputs: outputsPath };
  let topicArn: string;
  let removed: readonly string[];
  const localAccount = service.schedulerTopics.accountId;
  try {
    validateRegistry(updated, `tenant "${id}"`, { region: service.region, schedulerTopics: service.schedulerTopics });
    removed = await removalsToClear(location, [id], values.restore);
    topicArn = await service.ensureTenantTopic(id);
  } finally {
    service.close();
  }
  if (previous === undefined || !sameEntry(previous, entry)) await writeTenantsFile(tenantsPath, updated);
  await clearRemovals(location, removed);
  // The outputs list every tenant's input topic, as they would after a restart.
  await addTenantInputTopics(outputsPath, service.endpoint, { [id]: topicArn });

  const settings = tenantSettingsText(asTenant(entry));
  if (previous === undefined) output.err(`Tenant ${id} registered in ${tenantsPath}: ${settings}.`);
  else if (sameEntry(previous, entry)) output.err(`Tenant ${id} is registered already with these settings; nothing changed.`);
  else
    output.err(
      `Tenant ${id} was registered already; its settings are updated.\n  was: ${tenantSettingsText(asTenant(previous))}\n  now: ${settings}`,
    );
  // Every topic on the local service is in its one account: a tenant that may not target it can schedule nothing there.
  if (!mayPublishTo(asTenant(entry), `arn:aws:sns:${service.region}:${localAccount}:any`))
    output.err(
      `Warning: tenant ${id} may not target the local service's topics (account ${localAccount}): every request naming one is refused (TARGET_NOT_ALLOWED, FAILURE_TOPIC_NOT_ALLOWED). Add --target-account ${localAccount}.`,
    );
  output.err('Its input topic (publish schedule requests there):');
  output.out(topicArn);
  return 0;
}

/** The shared input topic's ARN at a location (the tenants' follow from it), or why it is unknown. */
async function publicInputTopicArn(location: Location): Promise<{ readonly arn: string } | { readonly unknown: string }> {
  if (location.kind === 'local') {
    // The registry is the file; the topic ARNs need the service's outputs, which exist once it has run.
    try {
      return { arn: (await readLocalOutputs(location.outputs)).inputTopicArn };
    } catch (error) {
      return { unknown: describeError(error) };
    }
  }
  if (location.stackOutputs === undefined) return { unknown: 'name the stack with --stack-outputs FILE to see them' };
  const { inputTopicArn } = await readStackOutputs(location.stackOutputs);
  return inputTopicArn === undefined ? { unknown: `${location.stackOutputs} has no InputTopicArn output` } : { arn: inputTopicArn };
}

export async function tenantList(args: string[], output: Output): Promise<number> {
  const command = 'tenant list';
  const line = commandLine(
    command,
    args,
    {
      json: { type: 'boolean', default: false },
      tenants: { type: 'string' },
      prefix: { type: 'string' },
      account: { type: 'string' },
      limit: { type: 'string', default: String(LIST_LIMIT.default) },
      after: { type: 'string' },
      ...LOCATION_OPTIONS,
    },
    { usage: USAGE.tenantList, output },
  );
  if (line === undefined) return 0;
  const { values, positionals } = line;
  noPositionals(positionals, command);
  const limit = pageLimit(values.limit, command);
  const location = locationOf(values, command);
  // A deployed stack's registry is the CDK app's: only the operator knows which file that was.
  if (location.kind === 'deployed' && values.tenants === undefined) {
    throw new AdminUsageError(`on a deployed stack, name with --tenants FILE the registry it was deployed with (${CDK_TENANTS})`, command);
  }
  const registry = new TenantRegistry(readRegistry(values.tenants ?? LOCAL_SERVICE_FILES.tenants), '');
  const publicTopic = await publicInputTopicArn(location);
  if ('unknown' in publicTopic) output.err(`Input topic ARNs unknown: ${publicTopic.unknown}`);
  const { tenants, next } = pageOfTenants(registry, { prefix: values.prefix, account: values.account, after: values.after, limit });
  // The pauses of this page's tenants only: a page costs the same reads however many are registered.
  const paused = await pausesAt(
    location,
    tenants.map(({ id }) => id),
  );
  if ('unknown' in paused) output.err(`Pauses unknown: ${paused.unknown}`);
  const views = tenants.map((tenant) => ({
    tenant,
    inputTopicArn: 'arn' in publicTopic ? inputTopicArnOf(publicTopic.arn, tenant.id) : undefined,
    pause: 'pauses' in paused ? paused.pauses.get(tenant.id) : undefined,
  }));
  if (values.json) output.out(JSON.stringify({ ...tenantsJson(views), next: next ?? null }, null, 2));
  else {
    output.out(views.length === 0 ? 'no tenant matches' : tenantsTable(views));
    if (next !== undefined) output.out(`next page: --after ${next}`);
  }
  return 0;
}
