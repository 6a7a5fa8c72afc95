import type { DeadLetter } from './dead-letters.js';
import { fields, iso, printable, table } from './format.js';

/** A message's queue as the tools name it; `unknown` for a body that is none of the scheduler's. */
export function queueName(letter: Pick<DeadLetter, 'source'>): string {
  return letter.source ?? 'unknown';
}

export function lastErrorText(letter: DeadLetter): string {
  const { lastError } = letter;
  if (lastError === undefined) return '-';
  return `${lastError.fn}: ${lastError.error.name}: ${lastError.error.message}`;
}

/** One line per message, the last error last (unpadded: it may be long). */
export function deadLettersTable(letters: readonly DeadLetter[]): string {
  return table([
    ['MESSAGE ID', 'QUEUE', 'RECEIVES', 'FIRST SENT', 'TENANT', 'EVENT', 'LABELS', 'LAST ERROR'],
    ...letters.map((letter) => [
      letter.messageId,
      queueName(letter),
      String(letter.receiveCount),
      letter.sentAt === 0 ? '-' : iso(letter.sentAt),
      letter.tenant ?? '-',
      letter.eventIds.length === 0 ? '-' : letter.eventIds.length === 1 ? (letter.eventIds[0] ?? '') : `${letter.eventIds.length} events`,
      letter.labels.length === 0 ? '-' : letter.labels.join(','),
      lastErrorText(letter),
    ]),
  ]);
}

/** A message as JSON, times as ISO 8601; `withBody` for `show`. */
export function deadLetterJson(letter: DeadLetter, withBody = false): Record<string, unknown> {
  const { lastError } = letter;
  return {
    messageId: letter.messageId,
    queue: queueName(letter),
    receiveCount: letter.receiveCount,
    firstSent: letter.sentAt === 0 ? null : iso(letter.sentAt),
    tenant: letter.tenant ?? null,
    eventIds: letter.eventIds,
    labels: letter.labels,
    lastError:
      lastError === undefined
        ? null
        : { fn: lastError.fn, ...lastError.error, at: iso(lastError.at), receiveCount: lastError.receiveCount },
    ...(withBody ? { body: letter.body } : {}),
  };
}

/** Everything about one message, its body last. */
export function deadLetterText(letter: DeadLetter): string {
  const { lastError } = letter;
  return [
    fields([
      ['message id', letter.messageId],
      ['queue', queueName(letter)],
      ['receives', String(letter.receiveCount)],
      ['first sent', letter.sentAt === 0 ? '-' : iso(letter.sentAt)],
      ['tenant', letter.tenant ?? '-'],
      ['events', letter.eventIds.join(' ') || '-'],
      ['labels', letter.labels.join(',') || '-'],
      ['last error', lastErrorText(letter)],
      ['failed at', lastError === undefined ? '-' : `${iso(lastError.at)} (delivery ${lastError.receiveCount})`],
    ]),
    '',
    // One line, whatever the body holds: a line break in it is escaped like any control character.
    printable(letter.body),
  ].join('\n');
}
