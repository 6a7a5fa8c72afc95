import { readFile, rm } from 'node:fs/promises';
import { answers } from '@adhoc-scheduler/shared/local-service-access';
import { writeJsonFile } from './json-file.js';
import type { LocalOutputs } from './runtime.js';

/**
 * The outputs file holds what a client needs to reach the local service. It exists while the
 * service runs: written once the service is ready, removed when it stops. Only a service
 * killed outright (`kill -9`) leaves it behind, and then nothing answers at its endpoint.
 */

/** What the file holds: the service's outputs, and the console's URL when scripts/start serves it. */
export type OutputsFileContent = LocalOutputs & { readonly consoleUrl?: string };

/** Written whole, so a reader finds no file or a complete one. */
export async function writeOutputsFile(path: string, outputs: OutputsFileContent): Promise<void> {
  await writeJsonFile(path, outputs);
}

async function readOutputs(path: string): Promise<Partial<LocalOutputs> | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as Partial<LocalOutputs>;
  } catch {
    return undefined;
  }
}

/**
 * Removes a file a killed service left (nothing answers at its endpoint), before a new service
 * starts on the same ports: until the new one is ready, nobody takes the old file for it.
 */
export async function removeStaleOutputsFile(path: string): Promise<void> {
  const outputs = await readOutputs(path);
  if (outputs !== undefined && (typeof outputs.endpoint !== 'string' || !(await answers(outputs.endpoint))))
    await rm(path, { force: true });
}

/** Removes the file of the service at `endpoint`; one another service has written since stays. */
export async function removeOutputsFile(path: string, endpoint: string): Promise<void> {
  if ((await readOutputs(path))?.endpoint === endpoint) await rm(path, { force: true });
}

/**
 * Adds tenants' input topics (by tenant id) to the running service's outputs (onboarding while
 * it runs); `false` when the file is not the service's at `endpoint` (absent, or another service's).
 */
export async function addTenantInputTopics(path: string, endpoint: string, topicArns: Readonly<Record<string, string>>): Promise<boolean> {
  const outputs = await readOutputs(path);
  if (outputs?.endpoint !== endpoint) return false;
  await writeJsonFile(path, { ...outputs, tenantInputTopicArns: { ...outputs.tenantInputTopicArns, ...topicArns } });
  return true;
}

/** Takes a removed tenant's input topic out of the running service's outputs; `false` as addTenantInputTopics says. */
export async function removeTenantInputTopic(path: string, endpoint: string, tenantId: string): Promise<boolean> {
  const outputs = await readOutputs(path);
  if (outputs?.endpoint !== endpoint) return false;
  const { [tenantId]: _removed, ...others } = outputs.tenantInputTopicArns ?? {};
  await writeJsonFile(path, { ...outputs, tenantInputTopicArns: others });
  return true;
}
