import type { FunctionName } from '@adhoc-scheduler/functions';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The workspace root: esbuild bundles from here, so workspace packages resolve. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const PNPM_LOCK_FILE = join(REPO_ROOT, 'pnpm-lock.yaml');
/** The CDK app's context file, where an operator keeps the deployment's `-c` options. */
export const CDK_CONTEXT_FILE = join(REPO_ROOT, 'infra', 'cdk.json');

/** The scheduler's five functions, named as their entry files and their metrics' `service` dimension. */
export const SCHEDULER_FUNCTIONS = ['ingest', 'loader', 'loading', 'emitter', 'changes'] as const satisfies readonly FunctionName[];
export type SchedulerFunctionName = (typeof SCHEDULER_FUNCTIONS)[number];

export function schedulerFunctionEntry(name: SchedulerFunctionName): string {
  return join(REPO_ROOT, 'functions', 'src', `${name}.ts`);
}

/** The custom resource that writes the stack's tenant registry into its table (TenantRegistryResource). */
export const REGISTRY_WRITER_ENTRY = join(REPO_ROOT, 'functions', 'src', 'registry-writer.ts');
