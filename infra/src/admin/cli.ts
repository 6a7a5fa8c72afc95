import { AdminError, UsageError } from './errors.js';
import { eventShow, eventsList } from './event-commands.js';
import type { Output } from './format.js';
import { quotaReconcile } from './quota-commands.js';
import { tenantAdd, tenantList } from './tenant-commands.js';
import { USAGE } from './usage.js';

const HELP = ['--help', '-h', 'help'];

type Command = (args: string[], output: Output) => Promise<number>;

/** Commands of two words; `events` is one word. */
const COMMANDS: Readonly<Record<string, Command>> = {
  'tenant add': tenantAdd,
  'tenant list': tenantList,
  'event show': eventShow,
  'quota reconcile': quotaReconcile,
};

async function dispatch(argv: readonly string[], output: Output): Promise<number> {
  const [command, subcommand, ...rest] = argv;
  if (command === undefined) {
    output.err(USAGE.main);
    return 2;
  }
  if (command === 'events') return eventsList(argv.slice(1), output);
  const handler = COMMANDS[`${command} ${subcommand ?? ''}`];
  if (handler !== undefined) return handler(rest, output);
  // `scripts/admin --help`, and `scripts/admin tenant --help` before knowing the second word.
  if (HELP.includes(command) || (subcommand !== undefined && HELP.includes(subcommand))) {
    output.out(USAGE.main);
    return 0;
  }
  throw new UsageError(`unknown command "${[command, subcommand].filter((word) => word !== undefined).join(' ')}"`, '');
}

/**
 * Runs one admin command line; resolves to its exit code: 0 done, 1 failed (the message says
 * why), 2 wrong command line.
 */
export async function runAdmin(argv: readonly string[], output: Output): Promise<number> {
  try {
    return await dispatch(argv, output);
  } catch (error) {
    if (error instanceof UsageError) {
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
