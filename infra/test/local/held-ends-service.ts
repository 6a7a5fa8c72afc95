import { parseArgs } from 'node:util';
import { writeOutputsFile } from '../../src/local/outputs-file.js';
import { startLocalScheduler } from '../../src/local/runtime.js';
import { recordsEnds } from './kit.js';

/**
 * The local service as scripts/start runs it (its options, its resource names), except that no
 * write of an emission's end ever answers: its events are published and stay open, which is
 * where kill-before-end.test.ts kills it. Started by spawnService's `entry`, never by a user.
 */
const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    port: { type: 'string' },
    'dynamodb-port': { type: 'string' },
    outputs: { type: 'string' },
    tenants: { type: 'string' },
    // Taken as scripts/start takes it; this service serves no console.
    'console-port': { type: 'string' },
    // Without the emitter's journal of ends: a crash then finds the published events open.
    'no-end-journal': { type: 'boolean', default: false },
  },
});
if (values['data-dir'] === undefined || values.outputs === undefined) throw new Error('--data-dir and --outputs are required');

const scheduler = await startLocalScheduler({
  dataDir: values['data-dir'],
  ports: { messaging: Number(values.port ?? 0), dynamodb: Number(values['dynamodb-port'] ?? 0) },
  namePrefix: 'adhoc-scheduler',
  env: process.env,
  journalEnds: !values['no-end-journal'],
  instrumentClients: (clients) =>
    clients.dynamodb.middlewareStack.add(
      (next, context) => async (args) => {
        if (recordsEnds(context.commandName ?? '', args.input)) await new Promise<never>(() => undefined);
        return next(args);
      },
      { step: 'initialize', name: 'holdEnds' },
    ),
});
await writeOutputsFile(values.outputs, scheduler.outputs);
