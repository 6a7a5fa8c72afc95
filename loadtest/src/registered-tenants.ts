import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PublishCommand } from '@aws-sdk/client-sns';
import { ReceiveMessageCommand, DeleteMessageCommand } from '@aws-sdk/client-sqs';
import { runAdmin } from '@adhoc-scheduler/infra';
import { EMISSION_ATTRIBUTE, eventIdFor, toIso, type TenantsDocument } from '@adhoc-scheduler/shared';
import { createConsumerEndpoint, deleteConsumerEndpoint } from './consumer.js';
import { registryDocument } from './registry.js';
import type { HarnessClients, ServiceFiles } from './service/connection.js';

/** What a run registered besides its own tenants, and how long that took. */
export interface RegisteredTenants {
  readonly count: number;
  /** `tenant import` of them all, from its start to its return: the topics created and the tenants file written. */
  readonly importSeconds: number;
  /**
   * From the import's return to the first event of the last tenant it registered delivered: by
   * then the service has read the new registry (a message from a topic it does not know makes it
   * read the file at once) and takes that tenant's requests.
   */
  readonly inForceSeconds: number;
  /** That event's id (`scripts/admin event show` finds it while the service runs). */
  readonly lastTenantFirstEventId: string;
}

/** An admin command line's outcome, as scripts/admin would have printed it. */
export interface AdminRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a `scripts/admin` command line in this process, through the CLI's own entry (runAdmin), as the operator's launcher does. */
export async function admin(argv: readonly string[]): Promise<AdminRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(argv, { out: (text) => out.push(text), err: (text) => err.push(text) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** The same, failing with what it printed unless it exits 0. */
export async function adminOrFail(argv: readonly string[]): Promise<AdminRun> {
  const run = await admin(argv);
  if (run.code !== 0) throw new Error(`scripts/admin ${argv.slice(0, 2).join(' ')} exited ${run.code}: ${run.stderr}`);
  return run;
}

/** The `--tenants` and `--outputs` flags of a service's files. */
export const fileFlags = (files: ServiceFiles): string[] => ['--tenants', files.tenants, '--outputs', files.outputs];

/**
 * The tenants a run registers besides its own: each with an account of its own (none the
 * emulator's), allowed to target the emulator's account, with a dead-letter topic in its own
 * account, as `loadtest registry` measures them.
 */
export function syntheticTenants(count: number): TenantsDocument {
  return registryDocument(count);
}

/**
 * Registers the tenants of a document on a running local service as an operator does: the file
 * written into `dir`, then `tenant import` (input topics created, the tenants file written once).
 * Resolves to the seconds the import took and each tenant's input topic.
 */
export async function importTenants(
  files: ServiceFiles,
  document: TenantsDocument,
  dir: string,
): Promise<{ readonly seconds: number; readonly topics: Readonly<Record<string, string>> }> {
  const file = join(dir, `import-${randomUUID().slice(0, 8)}.json`);
  await writeFile(file, JSON.stringify(document));
  const started = performance.now();
  const { stdout } = await adminOrFail(['tenant', 'import', file, ...fileFlags(files)]);
  const seconds = (performance.now() - started) / 1000;
  // One `<id> <topic ARN>` line per tenant.
  const topics = Object.fromEntries(
    stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => line.split(' ') as [string, string]),
  );
  return { seconds, topics };
}

/** The service a probe event goes through: its clients, and the role its emitter publishes with. */
export interface ProbeTarget {
  readonly clients: Pick<HarnessClients, 'sns' | 'sqs'>;
  readonly emitterRoleArn: string;
}

/** One event of a tenant, published due at once, and when it reached its own topic. */
export interface FirstEvent {
  readonly eventId: string;
  readonly clientId: string;
  /** Epoch ms: the publish answered, and the delivery received. */
  readonly publishedAt: number;
  readonly deliveredAt: number;
}

/** Longest a probe event may take to arrive: a service reading a registry of 100,000 tenants takes seconds. */
const PROBE_TIMEOUT_MS = 120_000;

/**
 * Publishes one event of a tenant to its input topic, due at once, to a topic of the run's own,
 * and waits until it is delivered there: the tenant's requests are taken. Short receives, none
 * aborted (an aborted long poll on fauxqs can swallow the next message).
 */
export async function firstEventDelivered(
  target: ProbeTarget,
  tenant: { readonly id: string; readonly inputTopicArn: string },
  user: string,
): Promise<FirstEvent> {
  const { sns, sqs } = target.clients;
  const name = `lt-probe-${randomUUID().slice(0, 8)}`;
  const endpoint = await createConsumerEndpoint(sns, sqs, name, target.emitterRoleArn);
  try {
    const clientId = `${name}-first`;
    const eventId = eventIdFor(tenant.id, user, clientId, '');
    const request = { date: toIso(Date.now()), target: endpoint.topicArn, user, payload: '{"probe":true}', id: clientId };
    await sns.send(new PublishCommand({ TopicArn: tenant.inputTopicArn, Message: JSON.stringify(request), MessageGroupId: tenant.id }));
    const publishedAt = Date.now();
    const deadline = publishedAt + PROBE_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: endpoint.queueUrl, WaitTimeSeconds: 1, MessageAttributeNames: ['All'] }),
      );
      const deliveredAt = Date.now();
      for (const message of Messages) {
        if (message.ReceiptHandle)
          await sqs.send(new DeleteMessageCommand({ QueueUrl: endpoint.queueUrl, ReceiptHandle: message.ReceiptHandle }));
        if (message.MessageAttributes?.[EMISSION_ATTRIBUTE.eventId]?.StringValue === eventId)
          return { eventId, clientId, publishedAt, deliveredAt };
      }
    }
    throw new Error(`tenant ${tenant.id}'s first event was not delivered within ${PROBE_TIMEOUT_MS / 1000} s`);
  } finally {
    await deleteConsumerEndpoint(sns, sqs, endpoint);
  }
}

/**
 * Registers `count` synthetic tenants on a running local service through `tenant import`, then
 * waits until the service takes the last one's requests (its first event delivered): the load
 * that follows meets the whole registry in force, not the service reading it.
 */
export async function registerTenants(
  files: ServiceFiles,
  target: ProbeTarget,
  count: number,
  dir: string,
  user: string,
): Promise<RegisteredTenants> {
  const document = syntheticTenants(count);
  const { seconds, topics } = await importTenants(files, document, dir);
  const imported = performance.now();
  const last = document.tenants?.at(-1)?.id;
  const inputTopicArn = last === undefined ? undefined : topics[last];
  if (last === undefined || inputTopicArn === undefined) throw new Error('tenant import printed no topic for its last tenant');
  const first = await firstEventDelivered(target, { id: last, inputTopicArn }, user);
  return { count, importSeconds: seconds, inForceSeconds: (performance.now() - imported) / 1000, lastTenantFirstEventId: first.eventId };
}
