import { statSync } from 'node:fs';
import { TenantRegistry } from '@adhoc-scheduler/shared';
import { readRegistry } from '../admin/registry.js';

const NO_FILE_REGISTRY = new TenantRegistry({}, '');

/**
 * The tenant registry the console shows, read from its file again only when the file changes:
 * checking and building a registry of 100,000 tenants takes about a second, far more than a
 * page may. Without a file (a deployed stack named without one), the console reads the stack's
 * table instead (pageOfTenantsAt), and this knows the public tenant alone.
 */
export class RegistryFile {
  private last: { readonly version: string; readonly registry: TenantRegistry } | undefined;

  constructor(readonly path: string | undefined) {}

  /** The registry as the file holds it now; an AdminError when the file is invalid. */
  current(): TenantRegistry {
    if (this.path === undefined) return NO_FILE_REGISTRY;
    // A rewrite (tenant add and import write a new file and rename it) changes the inode, the size or the time.
    const stats = statSync(this.path, { throwIfNoEntry: false });
    const version = stats === undefined ? 'absent' : `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
    if (this.last?.version !== version) this.last = { version, registry: new TenantRegistry(readRegistry(this.path), '') };
    return this.last.registry;
  }
}
