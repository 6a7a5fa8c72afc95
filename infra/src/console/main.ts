import { parseArgs } from 'node:util';
import { AdminError, AdminUsageError } from '../admin/errors.js';
import { HELP_OPTION, LOCATION_OPTIONS, parseOrExplain, wholeNumber } from '../admin/arguments.js';
import { locationOf, readStackOutputs } from '../admin/location.js';
import { ConsolePortInUseError, serveConsole } from './serve.js';
import { DEFAULT_CONSOLE_PORT } from './server.js';

const USAGE = `Serves the console in the browser, on 127.0.0.1 only, for the local service or a deployed stack.

Usage: scripts/console [--port N] [--tenants FILE] [where]

  --port N                where it listens (default ${DEFAULT_CONSOLE_PORT}; 0 lets the system pick)
  --tenants FILE          the tenant registry (default, for the local service, .local/tenants.json;
                          on a deployed stack, the file the CDK app was deployed with: without
                          it, only the public tenant is shown)
Where (local service by default; scripts/start serves the console itself):
  --outputs FILE          the local service's outputs (default .local/outputs.json)
  --stack-outputs FILE    a deployed stack: the JSON of cdk deploy --outputs-file
  --table NAME            a deployed stack's table by name (cancel and reschedule need --stack-outputs)
  --region R              the deployed stack's region (default: its Region output, else the AWS SDK's)
  --profile P             AWS credentials profile (default: the AWS SDK's default credential chain)

It prints its URL and runs until Ctrl-C. Changes need the token its pages carry; see
docs/operators/console.md. Exit codes: 0 stopped, 1 could not start, 2 wrong command line.`;

async function main(argv: string[]): Promise<number> {
  const command = 'console';
  const { values } = parseOrExplain(command, () =>
    parseArgs({
      args: argv,
      options: {
        port: { type: 'string', default: String(DEFAULT_CONSOLE_PORT) },
        tenants: { type: 'string' },
        ...LOCATION_OPTIONS,
        ...HELP_OPTION,
      },
    }),
  );
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const port = wholeNumber('--port', values.port, { min: 0, max: 65_535 }, command);
  const location = locationOf(values, command);
  // A wrong file is said now, not on the first page.
  if (location.kind === 'deployed' && location.stackOutputs !== undefined) await readStackOutputs(location.stackOutputs);
  const server = await serveConsole(location, { tenantsFile: values.tenants, port }).catch((error: unknown) => {
    if (error instanceof ConsolePortInUseError)
      throw new AdminError(`port ${port} is in use (is scripts/start's console there?): choose another with --port N`);
    throw error;
  });
  console.error(`Console of the ${server.description}; stop with Ctrl-C.`);
  console.log(server.url);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  return 0;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof AdminUsageError) {
    console.error(`${error.message} (scripts/console --help explains the command)`);
    process.exitCode = 2;
  } else if (error instanceof AdminError) {
    console.error(error.message);
    process.exitCode = 1;
  } else throw error;
}
