import { runAdmin } from './cli.js';

process.exitCode = await runAdmin(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
});
