import { existsSync, readFileSync, statSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { parseTenantsDocument, TenantRegistry, type Logger, type Tenant, type TenantDirectory, type TenantsDocument } from '@adhoc-scheduler/shared';

/**
 * The local service's tenant registry: a JSON file (shared/schema/tenants.schema.json); absent
 * means none registered. With the service's region, dead-letter topics are checked to be in it.
 */
export function readTenantsFile(path: string, region?: string): TenantsDocument {
  if (!existsSync(path)) return {};
  return parseTenantsDocument(JSON.parse(readFileSync(path, 'utf8')), { region });
}

/** Writes the registry whole (through a rename, so the running service never reads half a file). */
export async function writeTenantsFile(path: string, document: TenantsDocument): Promise<void> {
  const valid = parseTenantsDocument(document);
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(valid, null, 2)}\n`);
  await rename(temporary, path);
}

/** How often the file's modification time is checked while every topic is known. */
const RECHECK_MS = 1000;

/**
 * Tenants from the file, re-read when it changes: onboarding a tenant, or changing its quotas,
 * takes effect without a restart. A message from a topic not (yet) known re-reads at once, so
 * a tenant's first message, published right after onboarding, is not refused.
 */
export class FileTenantDirectory implements TenantDirectory {
  private registry: TenantRegistry;
  private modifiedMs: number;
  private checkedAt = 0;

  constructor(
    private readonly path: string,
    private readonly topicPrefix: string,
    private readonly region: string,
    private readonly logger: Logger,
  ) {
    this.modifiedMs = this.modified();
    this.registry = new TenantRegistry(readTenantsFile(path, region), topicPrefix);
  }

  forTopic(topicArn: string): Tenant | undefined {
    this.refresh(false);
    const tenant = this.registry.forTopic(topicArn);
    if (tenant !== undefined) return tenant;
    this.refresh(true);
    return this.registry.forTopic(topicArn);
  }

  tenant(id: string): Tenant | undefined {
    this.refresh(false);
    return this.registry.tenant(id);
  }

  private refresh(force: boolean): void {
    const now = Date.now();
    if (!force && now - this.checkedAt < RECHECK_MS) return;
    this.checkedAt = now;
    const modified = this.modified();
    if (modified === this.modifiedMs) return;
    // A file being edited by hand may be invalid for a moment: keep the last good registry.
    try {
      this.registry = new TenantRegistry(readTenantsFile(this.path, this.region), this.topicPrefix);
      this.modifiedMs = modified;
    } catch (error) {
      this.logger.warn({ err: error, path: this.path }, 'tenants file is invalid; the last valid registry stays in force');
    }
  }

  private modified(): number {
    return existsSync(this.path) ? statSync(this.path).mtimeMs : 0;
  }
}
