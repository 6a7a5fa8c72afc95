import { PUBLIC_TENANT_ID, sameEntry, type TenantEntry, type TenantsDocument } from '@adhoc-scheduler/shared';
import { LOCAL_SERVICE_FILES } from '@adhoc-scheduler/shared/local-service-access';
import { addTenantInputTopics } from '../local/outputs-file.js';
import { readPresentTenantsFile, TenantsFileError } from '../local/tenants-file.js';
import { commandLine, LOCATION_OPTIONS, noPositionals, onePositional } from './arguments.js';
import { AdminError } from './errors.js';
import type { Output } from './format.js';
import { LocalService } from './local-outputs.js';
import { localOnly, locationOf, type Location } from './location.js';
import { readRegistry, writeRegistry } from './registry.js';
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

/** Runs `create` over the ids, a few at once; the results by id. */
async function eachAtOnce(ids: readonly string[], create: (id: string) => Promise<string>): Promise<Record<string, string>> {
  const results: Record<string, string> = {};
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < ids.length; index = next++) {
      const id = ids[index] as string;
      results[id] = await create(id);
    }
  };
  await Promise.all(Array.from({ length: Math.min(TOPICS_AT_ONCE, ids.length) }, worker));
  return results;
}

export async function tenantImport(args: string[], output: Output): Promise<number> {
  const command = 'tenant import';
  const line = commandLine(
    command,
    args,
    {
      restore: { type: 'boolean', default: false },
      tenants: { type: 'string', default: LOCAL_SERVICE_FILES.tenants },
      ...LOCATION_OPTIONS,
    },
    { usage: USAGE.tenantImport, output },
  );
  if (line === undefined) return 0;
  const { values, positionals } = line;
  const outputsPath = localOnly(locationOf(values, command), command);
  const importPath = onePositional(positionals, 'the file to import', command);
  const imported = readImportFile(importPath);
  const tenantsPath = values.tenants;
  const before = readRegistry(tenantsPath);
  const plan = planImport(before, imported);
  const ids = (imported.tenants ?? []).map(({ id }) => id);

  // As tenant add: the topics first, the file once they are all there; a service that is not
  // running, or a registry that breaks a rule, stops this before anything is written.
  const service = await LocalService.connect(outputsPath);
  const location: Location = { kind: 'local', outputs: outputsPath };
  let topicArns: Record<string, string>;
  let removed: readonly string[];
  try {
    validateRegistry(plan.registry, `the tenants of ${importPath}`, { region: service.region, schedulerTopics: service.schedulerTopics });
    // Only the ids it adds can have been removed: one registered now was registered again since.
    removed = await removalsToClear(location, plan.added, values.restore);
    topicArns = await eachAtOnce(ids, (id) => service.ensureTenantTopic(id));
  } finally {
    service.close();
  }
  if (plan.added.length > 0 || plan.updated.length > 0 || plan.publicUpdated)
    await writeRegistry(tenantsPath, location, before, plan.registry);
  await clearRemovals(location, removed);
  await addTenantInputTopics(outputsPath, service.endpoint, topicArns);

  const publicNote =
    imported.public === undefined ? '' : `; the ${PUBLIC_TENANT_ID} tenant's settings ${plan.publicUpdated ? 'updated' : 'unchanged'}`;
  output.err(
    `Imported ${importPath} into ${tenantsPath}: ${plan.added.length} added, ${plan.updated.length} updated, ${plan.unchanged.length} unchanged${publicNote}. Tenants it does not name are left as they are.`,
  );
  if (ids.length > 0) output.err('Their input topics (tenant, then topic ARN):');
  for (const id of ids) output.out(`${id} ${topicArns[id]}`);
  return 0;
}

export async function tenantExport(args: string[], output: Output): Promise<number> {
  const command = 'tenant export';
  const line = commandLine(
    command,
    args,
    { tenants: { type: 'string', default: LOCAL_SERVICE_FILES.tenants } },
    { usage: USAGE.tenantExport, output },
  );
  if (line === undefined) return 0;
  noPositionals(line.positionals, command);
  // The registry as the service reads it (checked, as readRegistry does): what tenant import takes back.
  output.out(JSON.stringify(readRegistry(line.values.tenants), null, 2));
  return 0;
}
