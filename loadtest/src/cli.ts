import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CDK_CONTEXT_FILE, LOADING_CONCURRENCY } from '@adhoc-scheduler/infra';
import { CAPACITY_USAGE, parseCapacityCli, runCapacity } from './capacity/command.js';
import { runCompare } from './compare/command.js';
import { COMPARE_USAGE, parseCompareCli } from './compare/options.js';
import { compareTable } from './compare/table.js';
import { EXIT_CODE, verdict } from './exit.js';
import { FLOOR_USAGE, floorSummary, parseFloorCli, runFloor } from './floor.js';
import { parseCli, LoadTestUsageError, USAGE, type CliOptions } from './options.js';
import { LOADER_TICK_USAGE, loaderTickSummary, parseLoaderTickCli, runLoaderTickBenchmark } from './loader-tick.js';
import { parseRegistryCli, REGISTRY_USAGE, registrySummary, runRegistry } from './registry.js';
import { summary } from './report/summary.js';
import { parseTenantAddCli, runTenantAdd, TENANT_ADD_USAGE, tenantAddSummary } from './tenant-add.js';
import { runScenario } from './run.js';

const isUsageError = (error: unknown): boolean =>
  error instanceof LoadTestUsageError || Boolean((error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'));

/**
 * A subcommand that starts no scenario: its options parsed (help asked for: its usage; a wrong
 * command line: why, then its usage), then run, what it returns printed.
 */
async function subcommand<T>(
  args: readonly string[],
  usage: string,
  parse: (args: readonly string[]) => T | undefined,
  run: (options: T) => string | Promise<string>,
): Promise<number> {
  let options: T | undefined;
  try {
    options = parse(args);
  } catch (error) {
    if (!isUsageError(error)) throw error;
    process.stderr.write(`${(error as Error).message}\n\n${usage}\n`);
    return EXIT_CODE.usage;
  }
  if (!options) {
    process.stdout.write(`${usage}\n`);
    return EXIT_CODE.done;
  }
  process.stdout.write(`${await run(options)}\n`);
  return EXIT_CODE.done;
}

/** `loadtest capacity`: the capacity model, which starts no service. */
const capacityMain = (args: readonly string[]) =>
  subcommand(args, CAPACITY_USAGE, parseCapacityCli, (options) => {
    // pnpm runs the script in loadtest/; a path given is the caller's.
    const file =
      options.contextFile === 'infra/cdk.json' ? CDK_CONTEXT_FILE : resolve(process.env.INIT_CWD ?? process.cwd(), options.contextFile);
    const context = (JSON.parse(readFileSync(file, 'utf8')) as { context?: Record<string, unknown> }).context ?? {};
    return runCapacity(options, context, LOADING_CONCURRENCY);
  });

/** `loadtest floor`: the emulator alone, for a spike's floor. */
const floorMain = (args: readonly string[]) =>
  subcommand(args, FLOOR_USAGE, parseFloorCli, async (options) => floorSummary(options, await runFloor(options)));

/** `loadtest registry`: what reading a registry of many tenants costs, no service started. */
const registryMain = (args: readonly string[]) =>
  subcommand(args, REGISTRY_USAGE, parseRegistryCli, (options) => registrySummary(runRegistry(options)));

/** `loadtest loader-tick`: a loader tick's cost with many tenants registered and few with events due. */
const loaderTickMain = (args: readonly string[]) =>
  subcommand(args, LOADER_TICK_USAGE, parseLoaderTickCli, async (options) =>
    loaderTickSummary(options, await runLoaderTickBenchmark(options)),
  );

/** `loadtest tenant-add`: one more tenant add on a local service with many registered, and its first event. */
const tenantAddMain = (args: readonly string[]) =>
  subcommand(args, TENANT_ADD_USAGE, parseTenantAddCli, async (options) =>
    tenantAddSummary(await runTenantAdd(options, `pnpm --filter @adhoc-scheduler/loadtest loadtest tenant-add ${args.join(' ')}`)),
  );

/** `loadtest compare`: the scenario on a base commit and on this checkout, run alternately; exits 0 once compared, whatever the figures. */
const compareMain = (args: readonly string[]) =>
  subcommand(args, COMPARE_USAGE, parseCompareCli, async (options) => {
    const { report, outDir } = await runCompare(options, `pnpm --filter @adhoc-scheduler/loadtest loadtest compare ${args.join(' ')}`);
    return compareTable(report, outDir);
  });

async function main(): Promise<number> {
  if (process.argv[2] === 'capacity') return capacityMain(process.argv.slice(3));
  if (process.argv[2] === 'floor') return floorMain(process.argv.slice(3));
  if (process.argv[2] === 'compare') return compareMain(process.argv.slice(3));
  if (process.argv[2] === 'registry') return registryMain(process.argv.slice(3));
  if (process.argv[2] === 'loader-tick') return loaderTickMain(process.argv.slice(3));
  if (process.argv[2] === 'tenant-add') return tenantAddMain(process.argv.slice(3));
  let options: CliOptions | undefined;
  try {
    options = parseCli(process.argv.slice(2));
  } catch (error) {
    if (isUsageError(error)) {
      process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
      return EXIT_CODE.usage;
    }
    throw error;
  }
  if (!options) {
    process.stdout.write(`${USAGE}\n`);
    return EXIT_CODE.done;
  }
  // Every wait of the run ends by --max-minutes; this ends the process should a stop hang past it.
  setTimeout(
    () => {
      process.stderr.write(`the run exceeded --max-minutes ${options.maxMinutes}; exiting\n`);
      process.exit(EXIT_CODE.failed);
    },
    (options.maxMinutes + 5) * 60_000,
  ).unref();
  const command = `pnpm --filter @adhoc-scheduler/loadtest loadtest ${process.argv.slice(2).join(' ')}`;
  const { result, outDir } = await runScenario(options, command);
  process.stdout.write(`${summary(result, outDir, options.failOnMiss)}\n`);
  return verdict(result.targets, options.failOnMiss).code;
}

// Exit explicitly: idle SDK sockets must not hold the process open.
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(EXIT_CODE.failed);
  },
);
