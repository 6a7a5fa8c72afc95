import type { ReasonCode } from './reasons.js';

/** What a client's failure topic receives (also logged). */
export interface FailureNotice {
  readonly reason: ReasonCode;
  readonly message: string;
  /** The scheduler's event id, when the event got far enough to have one. */
  readonly eventId?: string | undefined;
  /** The offending event: the parsed request, or the raw text when it was not JSON. */
  readonly event: unknown;
  readonly failedAt: string;
  readonly details?: Readonly<Record<string, unknown>> | undefined;
}

export function failureNotice(
  reason: ReasonCode,
  message: string,
  event: unknown,
  now: number,
  extra: { eventId?: string | undefined; details?: Readonly<Record<string, unknown>> | undefined } = {},
): FailureNotice {
  return { reason, message, eventId: extra.eventId, event, failedAt: new Date(now).toISOString(), details: extra.details };
}
