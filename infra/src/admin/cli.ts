import { eventsCancel } from './bulk-cancel-command.js';
import { deadLetterShow, deadLettersList, deadLettersPurge, deadLettersRedrive } from './dead-letter-commands.js';
import { AdminError, AdminUsageError } from './errors.js';
import { eventShow, eventsList } from './event-commands.js';
import { printableOutput, type Output } from './format.js';
import { quotaReconcile } from './quota-commands.js';
import { refusalsList } from './refusal-commands.js';
import { seriesList, seriesShow } from './series-commands.js';
import { tableMigrate } from './table-commands.js';
import { tailTopic } from './tail-command.js';
import { tenantPause, tenantResume } from './pause-commands.js';
import { tenantAdd, tenantUpdate } from './tenant-commands.js';
import { tenantList } from './tenant-list.js';
import { tenantShow } from './tenant-show.js';
import { tenantRemove } from './tenant-removal.js';
import { tenantExport, tenantImport } from './tenant-transfer.js';
import { USAGE } from './usage.js';

const HELP = ['--help', '-h', 'help'];

type Command = (args: string[], output: Output) => Promise<number>;

/** Commands of two words, by the first, with the help of them all; `events` is one word, and `events cancel` two. */
const GROUPS: Readonly<Record<string, { readonly usage: string; readonly commands: Readonly<Record<string, Command>> }>> = {
  tenant: {
    usage: `${USAGE.tenantAdd}\n\n${USAGE.tenantUpdate}\n\n${USAGE.tenantShow}\n\n${USAGE.tenantImport}\n\n${USAGE.tenantExport}\n\n${USAGE.tenantRemove}\n\n${USAGE.tenantList}\n\n${USAGE.tenantPause}\n\n${USAGE.tenantResume}`,
    commands: {
      add: tenantAdd,
      update: tenantUpdate,
      show: tenantShow,
      import: tenantImport,
      export: tenantExport,
      remove: tenantRemove,
      list: tenantList,
      pause: tenantPause,
      resume: tenantResume,
    },
  },
  event: { usage: USAGE.eventShow, commands: { show: eventShow } },
  series: { usage: `${USAGE.seriesList}\n\n${USAGE.seriesShow}`, commands: { list: seriesList, show: seriesShow } },
  quota: { usage: USAGE.quotaReconcile, commands: { reconcile: quotaReconcile } },
  table: { usage: USAGE.tableMigrate, commands: { migrate: tableMigrate } },
  'dead-letters': {
    usage: USAGE.deadLetters,
    commands: { list: deadLettersList, show: deadLetterShow, redrive: deadLettersRedrive, purge: deadLettersPurge },
  },
};

async function dispatch(argv: readonly string[], output: Output): Promise<number> {
  const [command, subcommand, ...rest] = argv;
  if (command === undefined) {
    output.err(USAGE.main);
    return 2;
  }
  if (HELP.includes(command)) {
    output.out(USAGE.main);
    return 0;
  }
  if (command === 'refusals') return refusalsList(argv.slice(1), output);
  if (command === 'tail') return tailTopic(argv.slice(1), output);
  if (command === 'events') return subcommand === 'cancel' ? eventsCancel(rest, output) : eventsList(argv.slice(1), output);
  const group = GROUPS[command];
  if (group === undefined) throw new AdminUsageError(`unknown command "${command}"`, '');
  const names = Object.keys(group.commands);
  if (subcommand === undefined) throw new AdminUsageError(`${command} takes a command: ${names.join(' or ')}`, command);
  if (HELP.includes(subcommand)) {
    output.out(group.usage);
    return 0;
  }
  const handler = group.commands[subcommand];
  if (handler === undefined)
    throw new AdminUsageError(`unknown command "${command} ${subcommand}": ${command} takes ${names.join(' or ')}`, command);
  return handler(rest, output);
}

/**
 * Runs one admin command line; resolves to its exit code: 0 done, 1 failed (the message says
 * why), 2 wrong command line.
 */
export async function runAdmin(argv: readonly string[], given: Output): Promise<number> {
  const output = printableOutput(given);
  try {
    return await dispatch(argv, output);
  } catch (error) {
    if (error instanceof AdminUsageError) {
      const help = error.command === '' ? 'scripts/admin --help' : `scripts/admin ${error.command} --help`;
      output.err(`${error.message} (${help} explains the command)`);
      return 2;
    }
    if (error instanceof AdminError) {
      output.err(error.message);
      return 1;
    }
    throw error;
  }
}
