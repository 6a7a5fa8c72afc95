import { PUBLIC_TENANT_ID, TenantRegistry, type TenantsDocument } from '@adhoc-scheduler/shared';
import { LOCAL_SERVICE_FILES } from '@adhoc-scheduler/shared/local-service-access';
import { readTenantsFile, TenantsFileError } from '../local/tenants-file.js';
import { AdminError } from './errors.js';
import type { Location } from './location.js';

/** The tenants file as the service reads it; an invalid one is the operator's to correct first. */
export function readRegistry(path: string): TenantsDocument {
  try {
    return readTenantsFile(path);
  } catch (error) {
    if (!(error instanceof TenantsFileError)) throw error;
    throw new AdminError(`${error.message}. Correct it first.`);
  }
}

/**
 * Why a lookup of a tenant's events found nothing, when the registry does not know the tenant
 * (an id mistyped, or a tenant removed since): empty when it does, or when no registry is known
 * (a deployed stack named without --tenants).
 */
export function unregisteredTenant(tenant: string, location: Location, tenantsFile: string | undefined): string {
  const path = tenantsFile ?? (location.kind === 'local' ? LOCAL_SERVICE_FILES.tenants : undefined);
  if (tenant === PUBLIC_TENANT_ID || path === undefined || new TenantRegistry(readRegistry(path), '').tenant(tenant) !== undefined)
    return '';
  return `tenant "${tenant}" is not registered in ${path} (scripts/admin tenant list shows who is)`;
}
