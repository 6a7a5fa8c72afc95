import { PUBLIC_TENANT_ID } from '@adhoc-scheduler/shared';
import { LOCAL_SERVICE_FILES } from '@adhoc-scheduler/shared/local-service-access';
import { commandLine, LOCATION_OPTIONS, onePositional } from './arguments.js';
import { AdminError } from './errors.js';
import type { Output } from './format.js';
import { localOnly, locationOf } from './location.js';
import { readRegistry } from './registry.js';
import { entryFromFlags, registerEntry, updatedEntry } from './tenant-registration.js';
import { USAGE } from './usage.js';

/** The flags that say a tenant's settings, as tenant add and tenant update take them. */
const SETTING_OPTIONS = {
  account: { type: 'string', multiple: true, default: [] as string[] },
  'target-account': { type: 'string', multiple: true, default: [] as string[] },
  'dead-letter-topic': { type: 'string' },
  'max-open-events': { type: 'string' },
  'max-ingest-per-second': { type: 'string' },
  'max-control-per-second': { type: 'string' },
  'user-optional': { type: 'boolean', default: false },
  tenants: { type: 'string', default: LOCAL_SERVICE_FILES.tenants },
  ...LOCATION_OPTIONS,
} as const;

export async function tenantAdd(args: string[], output: Output): Promise<number> {
  const command = 'tenant add';
  const line = commandLine(
    command,
    args,
    { ...SETTING_OPTIONS, restore: { type: 'boolean', default: false } },
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
  return registerEntry(entryFromFlags(id, values, command), { tenantsPath: values.tenants, outputsPath, restore: values.restore }, output);
}

export async function tenantUpdate(args: string[], output: Output): Promise<number> {
  const command = 'tenant update';
  const line = commandLine(
    command,
    args,
    { ...SETTING_OPTIONS, 'user-required': { type: 'boolean', default: false } },
    { usage: USAGE.tenantUpdate, output },
  );
  if (line === undefined) return 0;
  const { values, positionals } = line;
  const outputsPath = localOnly(locationOf(values, command), command);
  const id = onePositional(positionals, 'the tenant id', command);
  const previous = readRegistry(values.tenants).tenants?.find((tenant) => tenant.id === id);
  if (previous === undefined)
    throw new AdminError(
      id === PUBLIC_TENANT_ID
        ? `"${PUBLIC_TENANT_ID}" is the shared input topic's tenant: its settings are the "public" section of the tenants file`
        : `tenant "${id}" is not registered in ${values.tenants}: tenant add registers it`,
    );
  return registerEntry(updatedEntry(previous, values, command), { tenantsPath: values.tenants, outputsPath, restore: false }, output);
}
