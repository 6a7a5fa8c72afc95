import { EMISSION_ATTRIBUTE } from '@adhoc-scheduler/shared/event';
import type { SNSEvent } from 'aws-lambda';

/**
 * A client's consumer, subscribed to its own output topic: logs each scheduled event and how
 * late it was, from the `scheduler-scheduled-at` attribute the scheduler sets on every event.
 */
export async function handler(event: SNSEvent): Promise<void> {
  const receivedAt = Date.now();
  for (const { Sns: message } of event.Records) {
    const scheduledAt = message.MessageAttributes[EMISSION_ATTRIBUTE.scheduledAt]?.Value;
    const dueAt = scheduledAt === undefined ? Number.NaN : Date.parse(scheduledAt);
    console.info({
      event: 'scheduled event received',
      eventId: message.MessageAttributes[EMISSION_ATTRIBUTE.eventId]?.Value,
      user: message.MessageAttributes[EMISSION_ATTRIBUTE.user]?.Value,
      scheduledAt,
      // When the scheduler published it, and when this function got it (SNS delivery included).
      publishLatenessMs: Date.parse(message.Timestamp) - dueAt,
      receiveLatenessMs: receivedAt - dueAt,
      payload: message.Message,
    });
  }
}
