import { ConsoleRequestError, type ActionOutcome, type ConsoleBackend, type DeadLetterFilter } from './backend.js';
import { eventsUrl } from './views.js';

/** A form's fields, as posted. */
export type Fields = Readonly<Record<string, string>>;

/** One change the console makes: what its confirmation asks, what it runs, where it leads back to. */
interface Action {
  /** The confirmation's question. */
  question(fields: Fields): string;
  /** The confirmation's button. */
  confirm(fields: Fields): string;
  /** The fields it carries through the confirmation. */
  readonly fields: readonly string[];
  run(backend: ConsoleBackend, fields: Fields): Promise<ActionOutcome>;
  back(fields: Fields): string;
}

function required(fields: Fields, name: string, what: string): string {
  const value = fields[name]?.trim();
  if (!value) throw new ConsoleRequestError(`${what} is missing`);
  return value;
}

/** A date as the listing's filters and the actions take it (ISO 8601; a bare date-time is UTC). */
export function parseDate(text: string, what: string): number {
  const trimmed = text.trim();
  const value = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(trimmed) || !trimmed.includes('T') ? trimmed : `${trimmed}Z`);
  if (Number.isNaN(value)) throw new ConsoleRequestError(`${what} "${text}" is not a date (write it as 2026-11-25T09:00:00Z)`);
  return value;
}

function optionalDate(fields: Fields, name: string, what: string): number | undefined {
  const text = fields[name]?.trim();
  return text ? parseDate(text, what) : undefined;
}

const eventPage = (fields: Fields) => `/events/${encodeURIComponent(fields.event ?? '')}`;

function deadLetterFilter(fields: Fields): DeadLetterFilter {
  const value = (name: string) => fields[name]?.trim() || undefined;
  return { queue: value('queue'), tenant: value('tenant'), eventId: value('event'), label: value('label') };
}

function chosen(fields: Fields): string {
  const filter = deadLetterFilter(fields);
  const parts = [
    `in ${filter.queue === undefined || filter.queue === 'all' ? 'every dead-letter queue' : `the ${filter.queue} dead-letter queue`}`,
    filter.tenant && `of tenant ${filter.tenant}`,
    filter.eventId && `of event ${filter.eventId}`,
    filter.label && `labelled ${filter.label}`,
  ];
  return parts.filter(Boolean).join(' ');
}

const deadLetters = (fields: Fields) => {
  const parameters = new URLSearchParams();
  for (const name of ['queue', 'tenant', 'event', 'label']) if (fields[name]) parameters.set(name, fields[name]);
  return `/dead-letters?${parameters.toString()}`;
};

export const ACTIONS: Readonly<Record<string, Action>> = {
  cancel: {
    question: (fields) => `Cancel event ${fields.event ?? ''}?`,
    confirm: () => 'Yes, cancel it',
    fields: ['event'],
    run: (backend, fields) => backend.cancel(required(fields, 'event', 'the event id')),
    back: eventPage,
  },
  reschedule: {
    question: (fields) => `Move event ${fields.event ?? ''} to ${fields.date ?? ''}?`,
    confirm: () => 'Yes, reschedule it',
    fields: ['event', 'date'],
    run: (backend, fields) =>
      backend.reschedule(
        required(fields, 'event', 'the event id'),
        parseDate(required(fields, 'date', 'the new due time'), 'the new due time'),
      ),
    back: eventPage,
  },
  'cancel-by-label': {
    question: (fields) =>
      `Cancel every open event of ${fields.tenant ?? ''} labelled ${fields.label ?? ''}${fields.due_before ? ` due before ${fields.due_before}` : ''}?`,
    confirm: () => 'Yes, cancel them',
    fields: ['tenant', 'label', 'due_before'],
    run: (backend, fields) =>
      backend.cancelByLabel(
        required(fields, 'tenant', 'the tenant'),
        required(fields, 'label', 'the label'),
        optionalDate(fields, 'due_before', 'due before'),
      ),
    back: (fields) => eventsUrl({ tenant: fields.tenant, label: fields.label }),
  },
  pause: {
    question: (fields) => `Pause tenant ${fields.tenant ?? ''}? Its events that come due are held until it is resumed.`,
    confirm: () => 'Yes, pause it',
    fields: ['tenant', 'note'],
    run: (backend, fields) => backend.pause(required(fields, 'tenant', 'the tenant'), fields.note?.trim() ?? ''),
    back: () => '/',
  },
  resume: {
    question: (fields) => `Resume tenant ${fields.tenant ?? ''}? Its held events are sent at once, late.`,
    confirm: () => 'Yes, resume it',
    fields: ['tenant'],
    run: (backend, fields) => backend.resume(required(fields, 'tenant', 'the tenant')),
    back: () => '/',
  },
  redrive: {
    question: (fields) => `Send the dead letters ${chosen(fields)} back to their source queues?`,
    confirm: () => 'Yes, redrive them',
    fields: ['queue', 'tenant', 'event', 'label'],
    run: (backend, fields) => backend.redrive(deadLetterFilter(fields)),
    back: deadLetters,
  },
  purge: {
    question: (fields) => `Delete the dead letters ${chosen(fields)}? They cannot be recovered.`,
    confirm: () => 'Yes, delete them',
    fields: ['queue', 'tenant', 'event', 'label'],
    run: (backend, fields) => backend.purge(deadLetterFilter(fields)),
    back: deadLetters,
  },
};
