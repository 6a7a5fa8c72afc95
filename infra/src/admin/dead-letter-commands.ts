import { parseArgs } from 'node:util';
import { DEAD_LETTER_SOURCES, type DeadLetterSource } from '../cdk/stack-outputs.js';
import { HELP_OPTION, LOCATION_OPTIONS, onePositional, parseOrExplain, wholeNumber } from './arguments.js';
import { deadLetterJson, deadLettersTable, deadLetterText, queueName } from './dead-letter-view.js';
import { DeadLetterQueues, type DeadLetter } from './dead-letters.js';
import { AdminError, AdminUsageError } from './errors.js';
import type { Output } from './format.js';
import { locationOf, type Location } from './location.js';
import { DEAD_LETTER_LIMIT, USAGE } from './usage.js';

const QUEUE_CHOICES = [...DEAD_LETTER_SOURCES, 'all'] as const;

const OPTIONS = {
  queue: { type: 'string', default: 'all' },
  tenant: { type: 'string' },
  event: { type: 'string' },
  label: { type: 'string' },
  limit: { type: 'string' },
  json: { type: 'boolean', default: false },
  yes: { type: 'boolean', default: false },
  'dry-run': { type: 'boolean', default: false },
  ...LOCATION_OPTIONS,
  ...HELP_OPTION,
} as const;

type Verb = 'list' | 'show' | 'redrive' | 'purge';

/** Which dead letters a command or the console chooses: the queues, the filters, how many at most. */
export interface DeadLetterChoice {
  readonly sources: readonly DeadLetterSource[];
  /** `--queue all` on the local service also takes messages whose body is none of the scheduler's. */
  readonly all: boolean;
  readonly tenant: string | undefined;
  readonly event: string | undefined;
  readonly label: string | undefined;
  /** One message, by its id. */
  readonly messageId?: string | undefined;
  readonly limit: number;
}

/** The sources `--queue` names (`all` for every one); undefined for a name that is none of them. */
export function queueChoice(queue: string): Pick<DeadLetterChoice, 'sources' | 'all'> | undefined {
  if (!(QUEUE_CHOICES as readonly string[]).includes(queue)) return undefined;
  return { sources: queue === 'all' ? DEAD_LETTER_SOURCES : [queue as DeadLetterSource], all: queue === 'all' };
}

function parse(verb: Verb, args: string[]) {
  const command = `dead-letters ${verb}`;
  const { values, positionals } = parseOrExplain(command, () => parseArgs({ args, allowPositionals: true, options: OPTIONS }));
  if (values.help) return { command, help: true as const };
  // Each verb takes only its own flags, so a --yes given to redrive is not silently ignored.
  if (values.yes && verb !== 'purge') throw new AdminUsageError('--yes is for purge', command);
  if (values['dry-run'] && verb !== 'redrive') throw new AdminUsageError('--dry-run is for redrive', command);
  if (verb !== 'show' && positionals.length > 0) throw new AdminUsageError(`unexpected arguments: ${positionals.join(' ')}`, command);
  const queues = queueChoice(values.queue);
  if (queues === undefined) throw new AdminUsageError(`--queue takes one of ${QUEUE_CHOICES.join(', ')}, not "${values.queue}"`, command);
  const limitBounds = verb === 'list' ? { min: 1, max: DEAD_LETTER_LIMIT.max } : { min: 1 };
  const limit =
    values.limit === undefined
      ? verb === 'list'
        ? DEAD_LETTER_LIMIT.default
        : Number.POSITIVE_INFINITY
      : wholeNumber('--limit', values.limit, limitBounds, command);
  const choice: DeadLetterChoice = {
    ...queues,
    tenant: values.tenant,
    event: values.event,
    label: values.label,
    limit,
  };
  return { command, help: false as const, values, positionals, choice, location: locationOf(values, command) };
}

/** What an empty listing says: where it looked, and the filters nothing matched, if any. */
function noDeadLettersText(choice: DeadLetterChoice): string {
  const filters = [
    choice.tenant === undefined ? undefined : `--tenant ${choice.tenant}`,
    choice.event === undefined ? undefined : `--event ${choice.event}`,
    choice.label === undefined ? undefined : `--label ${choice.label}`,
  ].filter((filter) => filter !== undefined);
  const where = choice.all ? 'any dead-letter queue' : `the ${choice.sources.join(', ')} dead-letter queue`;
  return `no dead letters${filters.length === 0 ? '' : ` matching ${filters.join(' ')}`} in ${where}`;
}

function chosenBy(choice: DeadLetterChoice): (letter: DeadLetter) => boolean {
  return (letter) =>
    (letter.source === undefined ? choice.all : choice.sources.includes(letter.source)) &&
    (choice.messageId === undefined || letter.messageId === choice.messageId) &&
    (choice.tenant === undefined || letter.tenant === choice.tenant) &&
    (choice.event === undefined || letter.eventIds.includes(choice.event)) &&
    (choice.label === undefined || letter.labels.includes(choice.label));
}

/** Peeks at the chosen messages at a location and runs `use` on them; what it did not delete is let go at the end. */
async function withChosen<T>(
  location: Location,
  choice: DeadLetterChoice,
  use: (letters: DeadLetter[], queues: DeadLetterQueues) => Promise<T>,
): Promise<T> {
  const queues = await DeadLetterQueues.connect(location, choice.sources);
  try {
    return await use(await queues.peek(chosenBy(choice), choice.limit), queues);
  } finally {
    await queues.close();
  }
}

/** The chosen dead letters at a location, as peeked (none is changed). */
export function listDeadLetters(location: Location, choice: DeadLetterChoice): Promise<DeadLetter[]> {
  return withChosen(location, choice, async (letters) => letters);
}

/** What a redrive did: the messages sent back (or that would be, dry), and those it could not send with why. */
export interface Redriven {
  readonly redriven: readonly DeadLetter[];
  readonly skipped: readonly { readonly letter: DeadLetter; readonly why: string }[];
}

/** Sends the chosen dead letters back to their source queues (dry: says which it would). */
export function redriveDeadLetters(location: Location, choice: DeadLetterChoice, dryRun: boolean): Promise<Redriven> {
  return withChosen(location, choice, async (letters, queues) => {
    const done: DeadLetter[] = [];
    const notDone: { readonly letter: DeadLetter; readonly why: string }[] = [];
    for (const letter of letters) {
      if (queues.queueUrlOf(letter) === undefined) {
        notDone.push({ letter, why: `no ${queueName(letter)} queue to send it back to (show it; purge removes it)` });
        continue;
      }
      if (!dryRun) {
        try {
          await queues.redrive(letter, Date.now());
        } catch (error) {
          notDone.push({ letter, why: (error as Error).message });
          continue;
        }
      }
      done.push(letter);
    }
    return { redriven: done, skipped: notDone };
  });
}

/** Deletes the chosen dead letters for good; the ones deleted. */
export function purgeDeadLetters(location: Location, choice: DeadLetterChoice): Promise<DeadLetter[]> {
  return withChosen(location, choice, async (letters, queues) => {
    for (const letter of letters) await queues.delete(letter);
    return letters;
  });
}

export async function deadLettersList(args: string[], output: Output): Promise<number> {
  const parsed = parse('list', args);
  if (parsed.help) {
    output.out(USAGE.deadLetters);
    return 0;
  }
  const letters = await listDeadLetters(parsed.location, parsed.choice);
  if (parsed.values.json) output.out(JSON.stringify({ messages: letters.map((letter) => deadLetterJson(letter)) }, null, 2));
  else output.out(letters.length === 0 ? noDeadLettersText(parsed.choice) : deadLettersTable(letters));
  if (letters.length === parsed.choice.limit) output.err(`the first ${letters.length}: --limit N shows more`);
  return 0;
}

export async function deadLetterShow(args: string[], output: Output): Promise<number> {
  const parsed = parse('show', args);
  if (parsed.help) {
    output.out(USAGE.deadLetters);
    return 0;
  }
  const messageId = onePositional(parsed.positionals, 'the message id (dead-letters list prints it)', parsed.command);
  const [letter] = await listDeadLetters(parsed.location, { ...parsed.choice, messageId });
  if (letter === undefined)
    throw new AdminError(
      `no message ${messageId} in the dead-letter queue${parsed.choice.all ? 's' : ` of the ${parsed.choice.sources[0]} queue`}`,
    );
  output.out(parsed.values.json ? JSON.stringify(deadLetterJson(letter, true), null, 2) : deadLetterText(letter));
  return 0;
}

export async function deadLettersRedrive(args: string[], output: Output): Promise<number> {
  const parsed = parse('redrive', args);
  if (parsed.help) {
    output.out(USAGE.deadLetters);
    return 0;
  }
  const dryRun = parsed.values['dry-run'];
  const { redriven, skipped } = await redriveDeadLetters(parsed.location, parsed.choice, dryRun);
  if (parsed.values.json) {
    output.out(
      JSON.stringify(
        {
          dryRun,
          redriven: redriven.map((letter) => deadLetterJson(letter)),
          skipped: skipped.map(({ letter, why }) => ({ ...deadLetterJson(letter), why })),
        },
        null,
        2,
      ),
    );
  } else {
    for (const letter of redriven)
      output.out(`${dryRun ? 'would redrive' : 'redriven'} ${letter.messageId} to the ${queueName(letter)} queue`);
    const counted = `${redriven.length} message${redriven.length === 1 ? '' : 's'}`;
    output.out(dryRun ? `${counted} would be redriven (dry run: nothing sent or deleted)` : `${counted} redriven`);
  }
  for (const { letter, why } of skipped) output.err(`not redriven: ${letter.messageId}: ${why}`);
  return skipped.length === 0 ? 0 : 1;
}

export async function deadLettersPurge(args: string[], output: Output): Promise<number> {
  const parsed = parse('purge', args);
  if (parsed.help) {
    output.out(USAGE.deadLetters);
    return 0;
  }
  if (!parsed.values.yes)
    throw new AdminUsageError(
      'purge deletes the chosen messages for good: add --yes (list, with the same filters, shows them)',
      parsed.command,
    );
  const purged = await purgeDeadLetters(parsed.location, parsed.choice);
  if (parsed.values.json) output.out(JSON.stringify({ purged: purged.map((letter) => deadLetterJson(letter)) }, null, 2));
  else {
    for (const letter of purged) output.out(`purged ${letter.messageId} (${queueName(letter)})`);
    output.out(`${purged.length} message${purged.length === 1 ? '' : 's'} purged`);
  }
  return 0;
}
