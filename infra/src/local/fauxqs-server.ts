/**
 * Child-process entry that runs fauxqs (the SNS/SQS emulator) on 127.0.0.1. It runs apart from
 * the scheduler so the emulator's work never shares an event loop with the emitter's timers.
 * Started by `emulators.ts`:
 *
 *   node --import tsx fauxqs-server.ts --port N [--data-dir DIR]
 *
 * Port 0 lets the system pick one. Prints {"listening":{"host":"127.0.0.1","port":N}} on stdout
 * once it accepts requests, or {"portInUse":{"host":"127.0.0.1","port":N}} and exits 1 when the
 * port is taken. Exits when stdin closes (the parent holds the other end, so this dies with it)
 * or on SIGTERM. With a data directory, queues, topics and messages (delayed ones included)
 * persist in SQLite there. It answers only signed requests from this machine, never a browser's
 * (emulator-access.ts).
 */
import { parseArgs } from 'node:util';
import { buildApp } from 'fauxqs';
import { emulatorRefusal } from './emulator-access.js';
import { type FauxqsApp, persistentApp } from './fauxqs-persistence.js';

const HOST = '127.0.0.1';

/**
 * Refuses, before anything is parsed, what emulator-access.ts refuses: a hook at the root runs for
 * every route, fauxqs's S3 and inspection routes and its 404 included, at the cost of a few string
 * tests a call.
 */
function guard(app: Awaited<FauxqsApp>): void {
  app.addHook('onRequest', (request, reply, done) => {
    const { headers } = request;
    const refusal = emulatorRefusal({
      remoteAddress: request.socket.remoteAddress,
      method: request.method,
      host: headers.host,
      origin: headers.origin,
      authorization: headers.authorization,
    });
    if (refusal === undefined) done();
    else void reply.code(403).type('text/plain; charset=utf-8').send(refusal);
  });
}

function report(message: object): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, 'data-dir': { type: 'string' } } });
const port = Number(values.port);
const dataDir = values['data-dir'];
const app = dataDir ? await persistentApp(dataDir) : buildApp({ logger: false });
guard(app);
let address: URL;
try {
  address = new URL(await app.listen({ host: HOST, port }));
} catch (error) {
  if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
  report({ portInUse: { host: HOST, port } });
  process.exit(1);
}

let closing = false;
function shutdown(): void {
  if (closing) return;
  closing = true;
  void app.close().finally(() => process.exit(0));
}
process.stdin.on('end', shutdown).on('close', shutdown).resume();
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);

report({ listening: { host: HOST, port: Number(address.port) } });
