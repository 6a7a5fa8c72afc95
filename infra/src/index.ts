/**
 * What the workspace's other packages may use of infra: the local service (how to start it,
 * what it writes, the emulators' account and keys), the emulators themselves and the resources
 * the service creates on them, the operator CLI run in the caller's process (the load test
 * onboards tenants through it, as an operator does), the tenant operations it runs (an
 * operator's own sign-up code calls what the CLI calls), the memory each function gets on Lambda,
 * how the functions' event sources batch, the CDK app's context file and the stack's counts of
 * resources and outputs (the capacity model reads them). Everything else under src/ is infra's own.
 */
export {
  LOCAL_ACCOUNT,
  LOCAL_CREDENTIALS,
  LOCAL_EMITTER_ROLE_ARN,
  LOCAL_REGION,
  LOADING_CONCURRENCY,
  startLocalScheduler,
  type LocalOutputs,
  type LocalScheduler,
  type LocalSchedulerOptions,
} from './local/runtime.js';
export { startEmulators, takenPorts, type EmulatorPorts, type Emulators } from './local/emulators.js';
export { createLocalResources } from './local/resources.js';
export { FUNCTION_MEMORY_MB } from './function-memory.js';
export { DEFAULT_PUBLIC_INGEST_MAX_CONCURRENCY, EVENT_SOURCES } from './queues.js';
export { CDK_CONTEXT_FILE } from './cdk/paths.js';
export { STACK_COUNTS } from './cdk/stack-counts.js';
export { runAdmin } from './admin/cli.js';
export { AdminError } from './admin/errors.js';
export { registerTenant, type Registered } from './admin/tenant-registration.js';
export type { TenantEntry, TenantsDocument } from '@adhoc-scheduler/shared';
export { removeTenant, type Removed } from './admin/tenant-removal.js';
export { importTenants, type Imported } from './admin/tenant-transfer.js';
export { LocalTenants, StackTenants, type StackAccess, type TenantPlace } from './admin/tenant-place.js';
export type { Output as AdminOutput } from './admin/format.js';
