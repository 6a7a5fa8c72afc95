import { parseTenantsDocument, TenantsDocumentError, type TenantsDocument } from '@adhoc-scheduler/shared';
import { RemovalPolicy } from 'aws-cdk-lib';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Node } from 'constructs';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { SCHEDULER_SETTING_NAMES, type SchedulerSettings } from './scheduler-config.js';
import { DEFAULT_SCHEDULER_STACK_NAME, type SchedulerStackProps } from './scheduler-stack.js';

/**
 * CDK context keys (`-c key=value` on the command line, or `context` in cdk.json) that
 * configure the scheduler stack. Every scheduler setting can also be given by its config
 * name, e.g. `-c shardCount=16`.
 */
export const SCHEDULER_CONTEXT = {
  stackName: 'stackName',
  publisherAccounts: 'publisherAccounts',
  /** The tenant registry itself: an object in cdk.json, or the same as JSON text with `-c`. */
  tenants: 'tenants',
  /** A file holding the registry, as the local service's tenants file (relative to infra/, where cdk runs the app). */
  tenantsFile: 'tenantsFile',
  topicPrefix: 'topicPrefix',
  publicIngestMaxConcurrency: 'publicIngestMaxConcurrency',
  emitterMaxConcurrency: 'emitterMaxConcurrency',
  emitterReservedConcurrency: 'emitterReservedConcurrency',
  latenessAlarmThresholdMs: 'latenessAlarmThresholdMs',
  loaderBacklogAlarmSeconds: 'loaderBacklogAlarmSeconds',
  accountConcurrencyQuota: 'accountConcurrencyQuota',
  logRetentionDays: 'logRetentionDays',
  tableRemovalPolicy: 'tableRemovalPolicy',
} as const;

export class ContextError extends Error {
  override readonly name = 'ContextError';
}

function raw(node: Node, key: string): unknown {
  const value: unknown = node.tryGetContext(key);
  return value === undefined || value === null || value === '' ? undefined : value;
}

export function contextString(node: Node, key: string): string | undefined {
  const value = raw(node, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new ContextError(`context "${key}" must be a string, got ${JSON.stringify(value)}`);
  return value;
}

function contextInteger(node: Node, key: string): number | undefined {
  const value = raw(node, key);
  if (value === undefined) return undefined;
  const number = typeof value === 'number' ? value : Number(value);
  if (!Number.isInteger(number)) throw new ContextError(`context "${key}" must be an integer, got ${JSON.stringify(value)}`);
  return number;
}

/** A list as a JSON array (cdk.json) or comma-separated (`-c publisherAccounts=111111111111,222222222222`). */
function contextList(node: Node, key: string): string[] | undefined {
  const value = raw(node, key);
  if (value === undefined) return undefined;
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value;
  if (typeof value === 'string') {
    const text = value.trim();
    if (text.startsWith('[')) {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed) && parsed.every((item) => typeof item === 'string')) return parsed;
    } else {
      return text
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '');
    }
  }
  throw new ContextError(`context "${key}" must be a list of strings, got ${JSON.stringify(value)}`);
}

function removalPolicy(node: Node, key: string): RemovalPolicy | undefined {
  const value = contextString(node, key);
  if (value === undefined) return undefined;
  if (value === 'retain') return RemovalPolicy.RETAIN;
  if (value === 'destroy') return RemovalPolicy.DESTROY;
  throw new ContextError(`context "${key}" must be "retain" or "destroy", got "${value}"`);
}

function retentionDays(node: Node, key: string): logs.RetentionDays | undefined {
  const days = contextInteger(node, key);
  if (days === undefined) return undefined;
  const allowed = Object.values(logs.RetentionDays).filter((value): value is number => typeof value === 'number');
  if (!allowed.includes(days))
    throw new ContextError(`context "${key}" must be one of CloudWatch's retentions (${allowed.join(', ')}), got ${days}`);
  return days;
}

function settings(node: Node): SchedulerSettings {
  const result: Record<string, string | number> = {};
  for (const name of SCHEDULER_SETTING_NAMES) {
    const value = name === 'logLevel' ? contextString(node, name) : contextInteger(node, name);
    if (value !== undefined) result[name] = value;
  }
  return result as SchedulerSettings;
}

/** The tenant registry from `tenants` or `tenantsFile` (not both), checked against its schema. */
function tenants(node: Node): TenantsDocument | undefined {
  const inline = raw(node, SCHEDULER_CONTEXT.tenants);
  const file = contextString(node, SCHEDULER_CONTEXT.tenantsFile);
  if (inline !== undefined && file !== undefined) {
    throw new ContextError(`context "${SCHEDULER_CONTEXT.tenants}" and "${SCHEDULER_CONTEXT.tenantsFile}" both give tenants: keep one`);
  }
  if (file !== undefined) {
    const path = resolve(file);
    return registry(`context "${SCHEDULER_CONTEXT.tenantsFile}" (${path})`, () => JSON.parse(readFileSync(path, 'utf8')));
  }
  if (inline === undefined) return undefined;
  return registry(`context "${SCHEDULER_CONTEXT.tenants}"`, () => (typeof inline === 'string' ? JSON.parse(inline) : inline));
}

function registry(source: string, read: () => unknown): TenantsDocument {
  let document: unknown;
  try {
    document = read();
  } catch (error) {
    throw new ContextError(`${source}: ${(error as Error).message}`, { cause: error });
  }
  try {
    return parseTenantsDocument(document);
  } catch (error) {
    if (error instanceof TenantsDocumentError) throw new ContextError(`${source}: ${error.message}`, { cause: error });
    throw error;
  }
}

export function schedulerStackName(node: Node): string {
  return contextString(node, SCHEDULER_CONTEXT.stackName) ?? DEFAULT_SCHEDULER_STACK_NAME;
}

export function schedulerStackPropsFromContext(node: Node): SchedulerStackProps {
  return {
    scheduler: {
      publisherAccounts: contextList(node, SCHEDULER_CONTEXT.publisherAccounts),
      tenants: tenants(node),
      topicPrefix: contextString(node, SCHEDULER_CONTEXT.topicPrefix),
      publicIngestMaxConcurrency: contextInteger(node, SCHEDULER_CONTEXT.publicIngestMaxConcurrency),
      emitterMaxConcurrency: contextInteger(node, SCHEDULER_CONTEXT.emitterMaxConcurrency),
      emitterReservedConcurrency: contextInteger(node, SCHEDULER_CONTEXT.emitterReservedConcurrency),
      logRetention: retentionDays(node, SCHEDULER_CONTEXT.logRetentionDays),
      tableRemovalPolicy: removalPolicy(node, SCHEDULER_CONTEXT.tableRemovalPolicy),
      settings: settings(node),
      monitoring: {
        latenessAlarmThresholdMs: contextInteger(node, SCHEDULER_CONTEXT.latenessAlarmThresholdMs),
        loaderBacklogAlarmSeconds: contextInteger(node, SCHEDULER_CONTEXT.loaderBacklogAlarmSeconds),
        accountConcurrencyQuota: contextInteger(node, SCHEDULER_CONTEXT.accountConcurrencyQuota),
      },
    },
  };
}
