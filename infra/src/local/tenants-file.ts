import { readFileSync, statSync } from 'node:fs';
import {
  noRegistryChanges,
  parseTenantsDocument,
  registryChanges,
  TenantsDocumentError,
  type Logger,
  type RegistryScope,
  type SchedulerTopics,
  type TenantRegistryTable,
  type TenantsDocument,
} from '@adhoc-scheduler/shared';
import { writeJsonFile } from './json-file.js';

/** A tenants file that cannot be used, with the file and what is wrong in it (where the JSON breaks, or the field the schema refuses). */
export class TenantsFileError extends Error {
  override readonly name = 'TenantsFileError';

  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${path} is not a valid tenant registry: ${problem}`);
  }
}

/**
 * The local service's tenant registry: a JSON file (shared/schema/tenants.schema.json); absent
 * means none registered. With the service's region and own topics, dead-letter topics are
 * checked to be in that region and none of those topics.
 */
export function readTenantsFile(path: string, scope: RegistryScope = {}): TenantsDocument {
  return readPresentTenantsFile(path, scope) ?? {};
}

/** The registry in the file; undefined when there is no file. */
export function readPresentTenantsFile(path: string, scope: RegistryScope): TenantsDocument | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new TenantsFileError(path, `cannot read it (${(error as Error).message})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new TenantsFileError(path, `not JSON (${(error as Error).message})`);
  }
  try {
    return parseTenantsDocument(value, scope);
  } catch (error) {
    if (!(error instanceof TenantsDocumentError)) throw error;
    throw new TenantsFileError(path, error.message.replace(/^invalid tenants: /, ''));
  }
}

/** Writes the registry whole, so the running service never reads half a file. */
export async function writeTenantsFile(path: string, document: TenantsDocument): Promise<void> {
  await writeJsonFile(path, parseTenantsDocument(document));
}

/** How often the file's modification time is checked. */
export const TENANTS_FILE_RECHECK_MS = 1000;

/**
 * The tenants file applied to the registry's table as it changes: onboarding a tenant, or
 * changing its quotas, takes effect without a restart. The file is checked every second, so an
 * invalid edit is logged at once, whether or not messages arrive. The admin commands write the
 * table themselves as they write the file (see writeRegistry), so what they change is in force
 * without waiting for this. A file that goes missing (an editor saving by rename, a `mv`) leaves
 * the last registry in force until it is back: its registered tenants are not refused meanwhile.
 */
export class TenantsFileSync {
  /**
   * Modification time of the file as last read, valid or not (undefined: there was no file): each
   * version is read (and its rejection, or its absence, logged) once.
   */
  private modifiedMs: number | undefined;
  private applying: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  /** `applied`: the registry the table holds now, as the service's start wrote it. */
  constructor(
    private readonly path: string,
    private readonly scope: { readonly region: string; readonly schedulerTopics: SchedulerTopics },
    private readonly table: TenantRegistryTable,
    private readonly logger: Logger,
    private applied: TenantsDocument,
  ) {
    this.modifiedMs = this.modified();
    this.timer = setInterval(() => {
      this.applying = this.applying.then(() => this.refresh());
    }, TENANTS_FILE_RECHECK_MS);
    this.timer.unref();
  }

  /** Stops watching the file, once what it read is written. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.applying;
  }

  private async refresh(): Promise<void> {
    const modified = this.modified();
    if (modified === this.modifiedMs) return;
    this.modifiedMs = modified;
    // A file being edited by hand may be invalid, or gone, for a moment: keep the last good registry.
    let document: TenantsDocument | undefined;
    try {
      document = readPresentTenantsFile(this.path, this.scope);
    } catch (error) {
      if (!(error instanceof TenantsFileError)) throw error;
      this.logger.warn({ path: this.path, problem: error.problem }, `${error.message}; the last valid registry stays in force`);
      return;
    }
    if (document === undefined) {
      // Gone since it was looked at, maybe: logged once, until it is back.
      this.modifiedMs = undefined;
      this.logger.warn({ path: this.path }, `${this.path} is missing; the last registry stays in force until the file is back`);
      return;
    }
    // Against the registry applied last, not a read of the table's whole: a change of one tenant
    // among 100,000 costs its own writes. One an admin command wrote already is written again, alike.
    const changes = registryChanges(this.applied, document);
    try {
      if (!noRegistryChanges(changes)) await this.table.write(changes);
    } catch (error) {
      // Read again at the next check, and written then.
      this.modifiedMs = undefined;
      this.logger.warn({ err: error, path: this.path }, 'tenants file read again, but its registry could not be written; trying again');
      return;
    }
    this.applied = document;
    this.logger.info(
      {
        path: this.path,
        tenants: (document.tenants ?? []).length,
        written: changes.put.map((entry) => entry.id),
        removed: changes.remove,
        publicChanged: changes.publicSettings !== undefined,
      },
      'tenants file read again; its registry is in force',
    );
  }

  private modified(): number | undefined {
    return statSync(this.path, { throwIfNoEntry: false })?.mtimeMs;
  }
}
