import { eventIdFor, inputTopicName, PUBLIC_TENANT_ID } from '@adhoc-scheduler/shared';
import type { DeadLetterSource } from '../cdk/stack-outputs.js';

/**
 * What a dead letter's body says: the queue it came from (the local service has one dead-letter
 * queue for every queue, so the body's kind tells), whose it is, which events it names and their
 * labels. Pure: the bodies are the scheduler's own messages, read without its decoders' checks,
 * since a dead letter may be one those decoders refused.
 */
export interface DeadLetterBody {
  /** Undefined when the body is none of the scheduler's messages. */
  readonly source: DeadLetterSource | undefined;
  readonly tenant: string | undefined;
  readonly eventIds: readonly string[];
  readonly labels: readonly string[];
  /** A delay-queue event's due time: its redriven copy waits in the delay queue as ingest's would. */
  readonly dueAt: number | undefined;
}

type Json = Partial<Record<string, unknown>>;

const NOT_OURS: DeadLetterBody = { source: undefined, tenant: undefined, eventIds: [], labels: [], dueAt: undefined };

function objectOf(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

function parsed(text: unknown): Json | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    return objectOf(JSON.parse(text));
  } catch {
    return undefined;
  }
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const texts = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);

/** `arn:<partition>:sns:<region>:<account>:`: where the scheduler's input topics are. */
function stackOf(topicArn: string): string {
  return topicArn.split(':').slice(0, 5).join(':');
}

/**
 * The tenant whose input topic this is: the public tenant's is the shared topic; a registered
 * tenant's is named `<prefix>-tenant-<id>` (inputTopicName), with the shared topic's prefix.
 */
function tenantOfTopic(topicArn: string, inputTopicArn: string): string | undefined {
  if (topicArn === inputTopicArn) return PUBLIC_TENANT_ID;
  const sharedName = inputTopicArn.split(':')[5] ?? '';
  const prefix = sharedName.slice(0, -inputTopicName('', PUBLIC_TENANT_ID).length);
  const tenantTopics = inputTopicName(prefix, 'x').slice(0, -1);
  const name = topicArn.split(':')[5] ?? '';
  return prefix !== '' && name.startsWith(tenantTopics) ? name.slice(tenantTopics.length) : undefined;
}

/** An input message as SNS delivered it to an ingest queue: the event ids follow as ingest derives them. */
function ingestBody(envelope: Json, messageId: string, topicArn: string, inputTopicArn: string): DeadLetterBody {
  const tenant = tenantOfTopic(topicArn, inputTopicArn);
  const request = parsed(envelope.Message) ?? {};
  const user = text(request.user) ?? '';
  const clientId = text(request.id);
  let eventIds: string[] = [];
  if (tenant !== undefined) {
    if (request.action === undefined) eventIds = [eventIdFor(tenant, user, clientId, messageId)];
    else {
      const named = text(request.event_id) ?? (clientId === undefined ? undefined : eventIdFor(tenant, user, clientId, ''));
      eventIds = named === undefined ? [] : [named];
    }
  }
  return {
    source: topicArn === inputTopicArn ? 'public-ingest' : 'ingest',
    tenant,
    eventIds,
    labels: texts(request.labels),
    dueAt: undefined,
  };
}

function delayBody(value: Json): DeadLetterBody {
  if (value.kind === 'event') {
    const event = objectOf(value.event) ?? {};
    const id = text(event.id);
    return {
      source: 'delay',
      tenant: text(event.tenant),
      eventIds: id === undefined ? [] : [id],
      labels: texts(event.labels),
      dueAt: typeof event.dueAt === 'number' ? event.dueAt : undefined,
    };
  }
  if (value.kind === 'notice' || value.kind === 'notices') {
    const notices =
      value.kind === 'notice' ? [value] : (Array.isArray(value.notices) ? value.notices : []).map((notice) => objectOf(notice) ?? {});
    const eventIds = notices.flatMap((notice) => texts([objectOf(notice.notice)?.eventId]));
    return { ...NOT_OURS, source: 'delay', tenant: text(notices[0]?.tenant), eventIds };
  }
  const events = (Array.isArray(value.ends) ? value.ends : []).map((end) => objectOf(objectOf(end)?.event) ?? {});
  return {
    ...NOT_OURS,
    source: 'delay',
    tenant: text(events[0]?.tenant),
    eventIds: events.flatMap((event) => texts([event.id])),
  };
}

/**
 * Reads a dead letter's body; `inputTopicArn` is the scheduler's shared input topic, which names its
 * other input topics. An envelope from a topic outside its account or region came through no
 * input topic of the scheduler: it is none of its messages, and has no queue to go back to.
 */
export function readDeadLetterBody(body: string, inputTopicArn: string): DeadLetterBody {
  const value = parsed(body);
  if (value === undefined) return NOT_OURS;
  const topicArn = text(value.TopicArn);
  const messageId = text(value.MessageId);
  if (value.Type === 'Notification' && topicArn !== undefined && messageId !== undefined)
    return stackOf(topicArn) === stackOf(inputTopicArn) ? ingestBody(value, messageId, topicArn, inputTopicArn) : NOT_OURS;
  if (value.kind === 'event' || value.kind === 'notice' || value.kind === 'notices' || value.kind === 'ends') return delayBody(value);
  if (Array.isArray(value.ids)) return { ...NOT_OURS, source: 'loading', eventIds: texts(value.ids) };
  // A page of a bulk change names its job.
  if (typeof value.jobId === 'string') return { ...NOT_OURS, source: 'changes', tenant: text(value.tenant), labels: texts([value.label]) };
  return NOT_OURS;
}
