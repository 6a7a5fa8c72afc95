import { EXIT_CODE, verdict } from './exit.js';
import { parseCli, LoadTestUsageError, USAGE, type CliOptions } from './options.js';
import { summary } from './report/summary.js';
import { runScenario } from './run.js';

async function main(): Promise<number> {
  let options: CliOptions | undefined;
  try {
    options = parseCli(process.argv.slice(2));
  } catch (error) {
    if (error instanceof LoadTestUsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
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
