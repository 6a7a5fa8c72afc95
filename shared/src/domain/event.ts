import { createHash } from 'node:crypto';

/** An accepted schedule request, as it travels through the store and the queues. */
export interface ScheduledEvent {
  /** The scheduler's id: derived from the client's idempotency key, or from the input message id. */
  readonly id: string;
  readonly user: string;
  readonly target: string;
  readonly payload: string;
  readonly failureTopic?: string | undefined;
  /** Due time, epoch milliseconds. */
  readonly dueAt: number;
}

/**
 * The same client id from the same user is the same event; without one, every redelivery of
 * the same input message is. User and key are hashed together so that neither can collide
 * with another user's keys.
 */
export function eventIdFor(user: string, clientId: string | undefined, inputMessageId: string): string {
  if (clientId === undefined) return `m-${inputMessageId}`;
  return `c-${createHash('sha256').update(user).update('\u0000').update(clientId).digest('hex').slice(0, 40)}`;
}

/** When DynamoDB's TTL may drop an event's record (epoch seconds): its dedup marker lives until then. */
export function expiresAtFor(dueAt: number, retentionSeconds: number): number {
  return Math.ceil(dueAt / 1000) + retentionSeconds;
}

/** Message attributes on every emission, so consumers can deduplicate and measure lateness. */
export const EMISSION_ATTRIBUTE = {
  eventId: 'scheduler-event-id',
  scheduledAt: 'scheduler-scheduled-at',
  user: 'scheduler-user',
} as const;

export function emissionAttributes(event: ScheduledEvent): Record<string, string> {
  return {
    [EMISSION_ATTRIBUTE.eventId]: event.id,
    [EMISSION_ATTRIBUTE.scheduledAt]: new Date(event.dueAt).toISOString(),
    [EMISSION_ATTRIBUTE.user]: event.user,
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
