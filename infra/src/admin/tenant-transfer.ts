import { PUBLIC_TENANT_ID, sameEntry, type TenantEntry, type TenantsDocument } from '@adhoc-scheduler/shared';
import { readPresentTenantsFile, TenantsFileError } from '../local/tenants-file.js';
import { commandLine, LOCATION_OPTIONS, noPositionals, onePositional } from './arguments.js';
import { AdminError } from './errors.js';
import type { Output } from './format.js';
import { locationOf } from './location.js';
import { tenantPlace, type TenantPlace } from './tenant-place.js';
import { validateRegistry } from './tenant-registration.js';
import { clearRemovals, removalsToClear } from './tenant-removal.js';
import { USAGE } from './usage.js';

/** Input topics created (or found) at once while importing: a few thousand tenants take seconds, not minutes. */
const TOPICS_AT_ONCE = 16;

/** What an import does to the registry: each imported tenant added, updated or left as it was. */
export interface ImportPlan {
  readonly registry: TenantsDocument;
  readonly added: readonly string[];
  readonly updated: readonly string[];
  readonly unchanged: readonly string[];
  /** Whether the import's public section replaces a different one. */
  readonly publicUpdated: boolean;
}

/**
 * The registry with the imported one laid over it: each imported tenant replaces the entry of
 * its id, or is added after the others; a public section replaces the registry's. A tenant the
 * import does not name stays as it is: an import adds and updates, and removes no one.
 */
export function planImport(current: TenantsDocument, imported: TenantsDocument): ImportPlan {
  const existing = new Map((current.tenants ?? []).map((entry) => [entry.id, entry]));
  const importedById = new Map((imported.tenants ?? []).map((entry) => [entry.id, entry]));
  const added: string[] = [];
  const updated: string[] = [];
  const unchanged: string[] = [];
  for (const entry of imported.tenants ?? []) {
    const previous = existing.get(entry.id);
    if (previous === undefined) added.push(entry.id);
    else (sameEntry(previous, entry) ? unchanged : updated).push(entry.id);
  }
  const tenants: TenantEntry[] = [
    ...(current.tenants ?? []).map((entry) => importedById.get(entry.id) ?? entry),
    ...added.map((id) => importedById.get(id) as TenantEntry),
  ];
  const publicSection = imported.public ?? current.public;
  const publicUpdated = imported.public !== undefined && JSON.stringify(imported.public) !== JSON.stringify(current.public ?? {});
  return {
    registry: { ...(publicSection !== undefined ? { public: publicSection } : {}), tenants },
    added,
    updated,
    unchanged,
    publicUpdated,
  };
}

/** The file to import: a tenants file, present and valid on its own. */
function readImportFile(path: string): TenantsDocument {
  try {
    const document = readPresentTenantsFile(path, {});
    if (document === undefined) throw new AdminError(`${path}: no such file`);
    return document;
  } catch (error) {
    if (!(error instanceof TenantsFileError)) throw error;
    throw new AdminError(`${error.message}. Nothing was imported.`);
  }
}

/** Runs `create` over the entries, a few at once; the results by id. */
async function eachAtOnce(
  entries: readonly TenantEntry[],
  create: (entry: TenantEntry) => Promise<string>,
): Promise<Record<string, string>> {
  const results: Record<string, string> = {};
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < entries.length; index = next++) {
      const entry = entries[index] as TenantEntry;
      results[entry.id] = await create(entry);
    }
  };
  await Promise.all(Array.from({ length: Math.min(TOPICS_AT_ONCE, entries.length) }, worker));
  return results;
}

/** What an import did: the plan it carried out, and each imported tenant's input topic. */
export interface Imported {
  readonly plan: ImportPlan;
  readonly topicArns: Readonly<Record<string, string>>;
}

/**
 * Imports a registry at a place (the running local service, or a deployed stack), as tenant add
 * registers one tenant: the registry it makes checked whole, the topics made, then the registry
 * written. A registry that breaks a rule, or a place that cannot be reached, stops it before
 * anything is written. What tenant import does, for an operator's own code too.
 */
export async function importTenants(
  imported: TenantsDocument,
  place: TenantPlace,
  options: { readonly restore: boolean; readonly what: string },
): Promise<Imported> {
  const before = await place.readRegistry();
  const plan = planImport(before, imported);
  validateRegistry(plan.registry, options.what, await place.scope());
  // Only the ids it adds can have been removed: one registered now was registered again since.
  const removed = await removalsToClear(place.location, plan.added, options.restore);
  const topicArns = await eachAtOnce(imported.tenants ?? [], (entry) => place.ensureTenantTopic(entry));
  if (plan.added.length > 0 || plan.updated.length > 0 || plan.publicUpdated) await place.writeRegistry(before, plan.registry);
  await clearRemovals(place.location, removed);
  await place.topicsRegistered(topicArns);
  return { plan, topicArns };
}

export async function tenantImport(args: string[], output: Output): Promise<number> {
  const command = 'tenant import';
  const line = commandLine(
    command,
    args,
    {
      restore: { type: 'boolean', default: false },
      tenants: { type: 'string' },
      ...LOCATION_OPTIONS,
    },
    { usage: USAGE.tenantImport, output },
  );
  if (line === undefined) return 0;
  const { values, positionals } = line;
  const importPath = onePositional(positionals, 'the file to import', command);
  const imported = readImportFile(importPath);
  const place = await tenantPlace(locationOf(values, command), values.tenants, command);
  let result: Imported;
  try {
    result = await importTenants(imported, place, { restore: values.restore, what: `the tenants of ${importPath}` });
  } finally {
    place.close();
  }
  const { plan, topicArns } = result;
  const ids = (imported.tenants ?? []).map(({ id }) => id);
  const publicNote =
    imported.public === undefined ? '' : `; the ${PUBLIC_TENANT_ID} tenant's settings ${plan.publicUpdated ? 'updated' : 'unchanged'}`;
  output.err(
    `Imported ${importPath} into ${place.registryName}: ${plan.added.length} added, ${plan.updated.length} updated, ${plan.unchanged.length} unchanged${publicNote}. Tenants it does not name are left as they are.`,
  );
  if (ids.length > 0) output.err('Their input topics (tenant, then topic ARN):');
  for (const id of ids) output.out(`${id} ${topicArns[id]}`);
  return 0;
}

export async function tenantExport(args: string[], output: Output): Promise<number> {
  const command = 'tenant export';
  const line = commandLine(command, args, { tenants: { type: 'string' }, ...LOCATION_OPTIONS }, { usage: USAGE.tenantExport, output });
  if (line === undefined) return 0;
  noPositionals(line.positionals, command);
  const place = await tenantPlace(locationOf(line.values, command), line.values.tenants, command);
  try {
    // The registry as the service reads it (checked): what tenant import takes back.
    output.out(JSON.stringify(await place.readRegistry(), null, 2));
  } finally {
    place.close();
  }
  return 0;
}
