import { createHash } from 'node:crypto';
import { clientEventId, messageEventId } from './table-keys.js';
import { PUBLIC_TENANT_ID } from './tenants.js';

/** An accepted schedule request, as it travels through the store and the queues. */
export interface ScheduledEvent {
  /** The scheduler's id: derived from the client's idempotency key, or from the input message id. */
  readonly id: string;
  /** Whose event it is: the tenant of the input topic it arrived on. */
  readonly tenant: string;
  /** Informational: the `user` the client wrote; none where its tenant does not require one. */
  readonly user?: string;
  readonly target: string;
  readonly payload: string;
  readonly failureTopic?: string | undefined;
  /** Due time, epoch milliseconds. */
  readonly dueAt: number;
  /** Goes up with every reschedule: a delay-queue message of an older version is stale. */
  readonly version: number;
  /** The client's labels (schedule-request.schema.json says what one may be), present only when it gave some. */
  readonly labels?: readonly string[] | undefined;
  /** The series it is an occurrence of, and its number there (1-based); absent on a one-off event. */
  readonly series?: OccurrenceOf | undefined;
}

/** Which series an event is an occurrence of, and which occurrence. */
export interface OccurrenceOf {
  readonly id: string;
  readonly occurrence: number;
}

/**
 * The same client id from the same tenant is the same event; without one, every redelivery of
 * the same input message is. Tenant and key are hashed together, so no tenant can reach
 * another's events by choosing a key. The public tenant's clients are told apart only by
 * their `user`, as in the original service.
 */
export function eventIdFor(tenant: string, user: string, clientId: string | undefined, inputMessageId: string): string {
  if (clientId === undefined) return messageEventId(inputMessageId);
  const namespace = tenant === PUBLIC_TENANT_ID ? `${tenant}\u0000${user}` : tenant;
  return clientEventId(createHash('sha256').update(namespace).update('\u0000').update(clientId).digest('hex').slice(0, 40));
}

/**
 * A digest of what a schedule request asks for: its due time, target, payload, failure topic,
 * user and labels. The same idempotency key with another content is another request, which must
 * change nothing the first one made. 192 bits of SHA-256 (base64url): short enough for every
 * record, and no one can make two requests that share it. Labels count in any order, and only
 * when there are some, so that digests kept before labels existed still match their requests.
 */
export function requestHashOf(event: Pick<ScheduledEvent, 'dueAt' | 'target' | 'payload' | 'failureTopic' | 'user' | 'labels'>): string {
  const fields: unknown[] = [event.dueAt, event.target, event.payload, event.failureTopic ?? null, event.user ?? null];
  if (event.labels !== undefined && event.labels.length > 0) fields.push([...event.labels].sort());
  const content = JSON.stringify(fields);
  return createHash('sha256').update(content).digest('base64url').slice(0, 32);
}

/** When DynamoDB's TTL may drop an event's record (epoch seconds): its dedup marker lives until then. */
export function expiresAtFor(dueAt: number, retentionSeconds: number): number {
  return Math.ceil(dueAt / 1000) + retentionSeconds;
}

/**
 * Message attributes on every emission, so consumers can deduplicate and measure lateness.
 * `publishedAt` is the emitter's clock when it hands the message to SNS: never before the due
 * time, which a consumer's receive time cannot show to the millisecond. SNS takes at most 10
 * attributes a message.
 */
export const EMISSION_ATTRIBUTE = {
  eventId: 'scheduler-event-id',
  scheduledAt: 'scheduler-scheduled-at',
  publishedAt: 'scheduler-published-at',
  user: 'scheduler-user',
  tenant: 'scheduler-tenant',
  /** The event's labels joined by commas (no label holds one); only on events that have labels. */
  labels: 'scheduler-labels',
  /** The series an occurrence belongs to; only on occurrences of a recurring series. */
  seriesId: 'scheduler-series-id',
  /** The occurrence's number in its series, from 1; only on occurrences. */
  occurrence: 'scheduler-occurrence',
} as const;

/** An emission's attributes, `publishedAt` its publish time (epoch ms). */
export function emissionAttributes(
  event: Pick<ScheduledEvent, 'id' | 'dueAt' | 'user' | 'tenant' | 'labels' | 'series'>,
  publishedAt: number,
): Record<string, string> {
  return {
    [EMISSION_ATTRIBUTE.eventId]: event.id,
    [EMISSION_ATTRIBUTE.scheduledAt]: new Date(event.dueAt).toISOString(),
    [EMISSION_ATTRIBUTE.publishedAt]: new Date(publishedAt).toISOString(),
    ...(event.user !== undefined ? { [EMISSION_ATTRIBUTE.user]: event.user } : {}),
    [EMISSION_ATTRIBUTE.tenant]: event.tenant,
    ...(event.labels !== undefined && event.labels.length > 0 ? { [EMISSION_ATTRIBUTE.labels]: event.labels.join(',') } : {}),
    ...(event.series === undefined
      ? {}
      : { [EMISSION_ATTRIBUTE.seriesId]: event.series.id, [EMISSION_ATTRIBUTE.occurrence]: String(event.series.occurrence) }),
  };
}

/** Size of an SNS message as SNS counts it: body plus attribute names, types and values. */
export function snsMessageBytes(body: string, stringAttributes: Record<string, string>): number {
  let bytes = Buffer.byteLength(body);
  for (const [name, value] of Object.entries(stringAttributes)) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength('String') + Buffer.byteLength(value);
  }
  return bytes;
}
