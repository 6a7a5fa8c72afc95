import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { AdminUsageError } from './errors.js';
import type { Output } from './format.js';

/** Options every command takes. */
export const HELP_OPTION = { help: { type: 'boolean', short: 'h', default: false } } as const;

/** Which scheduler to read: the local service (default) or a deployed stack. */
export const LOCATION_OPTIONS = {
  outputs: { type: 'string' },
  'stack-outputs': { type: 'string' },
  table: { type: 'string' },
  region: { type: 'string' },
  profile: { type: 'string' },
} as const;

export type LocationValues = {
  readonly [K in keyof typeof LOCATION_OPTIONS]?: string | undefined;
};

/** Runs node:util parseArgs, turning what it rejects (unknown option, missing value) into a AdminUsageError. */
export function parseOrExplain<T>(command: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new AdminUsageError((error as Error).message, command);
  }
}

/** A whole number flag within bounds, or a AdminUsageError naming the flag and the value. */
export function wholeNumber(flag: string, text: string, bounds: { readonly min: number; readonly max?: number }, command: string): number {
  const value = Number(text);
  const range = bounds.max === undefined ? `${bounds.min} or more` : `from ${bounds.min} to ${bounds.max}`;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < bounds.min || (bounds.max !== undefined && value > bounds.max)) {
    throw new AdminUsageError(`${flag} takes a whole number ${range}, not "${text}"`, command);
  }
  return value;
}

/** The one positional a command takes (an id), or a AdminUsageError. */
export function onePositional(positionals: readonly string[], what: string, command: string): string {
  const [value, ...rest] = positionals;
  if (value === undefined) throw new AdminUsageError(`${what} is missing`, command);
  if (rest.length > 0) throw new AdminUsageError(`unexpected arguments: ${rest.join(' ')}`, command);
  return value;
}

type CommandLine<O extends ParseArgsOptionsConfig> = ReturnType<
  typeof parseArgs<{ args: string[]; allowPositionals: true; options: O & typeof HELP_OPTION }>
>;

/**
 * Every command's preamble: its arguments parsed (what parseArgs rejects is a usage error naming
 * the command), or, with --help, its usage printed and undefined returned (the command exits 0).
 */
export function commandLine<const O extends ParseArgsOptionsConfig>(
  command: string,
  args: string[],
  options: O,
  help: { readonly usage: string; readonly output: Output },
): CommandLine<O> | undefined {
  const line = parseOrExplain(command, () =>
    parseArgs({ args, allowPositionals: true, options: { ...options, ...HELP_OPTION } as O & typeof HELP_OPTION }),
  ) as CommandLine<O>;
  if ((line.values as { readonly help?: boolean }).help === true) {
    help.output.out(help.usage);
    return undefined;
  }
  return line;
}

/** A command that takes no positional argument refuses any, naming them. */
export function noPositionals(positionals: readonly string[], command: string): void {
  if (positionals.length > 0) throw new AdminUsageError(`unexpected arguments: ${positionals.join(' ')}`, command);
}
