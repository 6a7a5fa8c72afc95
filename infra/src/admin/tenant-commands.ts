import { PUBLIC_TENANT_ID } from '@adhoc-scheduler/shared';
import { commandLine, LOCATION_OPTIONS, onePositional } from './arguments.js';
import { AdminError } from './errors.js';
import type { Output } from './format.js';
import { locationOf } from './location.js';
import { tenantPlace } from './tenant-place.js';
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
  tenants: { type: 'string' },
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
  const id = onePositional(positionals, 'the tenant id', command);
  if (id === PUBLIC_TENANT_ID) {
    throw new AdminError(
      `"${PUBLIC_TENANT_ID}" is the shared input topic's tenant, not one to add: its settings are the "public" section of the tenants file`,
    );
  }
  const entry = entryFromFlags(id, values, command);
  const place = await tenantPlace(locationOf(values, command), values.tenants, command);
  try {
    return await registerEntry(entry, place, values.restore, output);
  } finally {
    place.close();
  }
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
  const id = onePositional(positionals, 'the tenant id', command);
  const place = await tenantPlace(locationOf(values, command), values.tenants, command);
  try {
    const previous = (await place.readRegistry()).tenants?.find((tenant) => tenant.id === id);
    if (previous === undefined)
      throw new AdminError(
        id === PUBLIC_TENANT_ID
          ? `"${PUBLIC_TENANT_ID}" is the shared input topic's tenant: its settings are the "public" section of the tenants file`
          : `tenant "${id}" is not registered in ${place.registryName}: tenant add registers it`,
      );
    return await registerEntry(updatedEntry(previous, values, command), place, false, output);
  } finally {
    place.close();
  }
}
