/**
 * Child-process entry that runs fauxqs (the SNS/SQS emulator) on 127.0.0.1 and a port the system
 * picks. It runs apart from the scheduler so the emulator's work never shares an event loop with
 * the emitter's timers. Started by `emulators.ts`:
 *
 *   node --import tsx fauxqs-server.ts [dataDir]
 *
 * Prints {"listening":{"host":"127.0.0.1","port":N}} on stdout once it accepts requests. Exits
 * when stdin closes (the parent holds the other end, so this dies with it) or on SIGTERM.
 * With a dataDir, queues, topics and messages (delayed ones included) persist in SQLite there.
 */
import { buildApp, type BuildAppOptions } from 'fauxqs';

const HOST = '127.0.0.1';

type Stores = NonNullable<BuildAppOptions['stores']>;
type Persistence = NonNullable<Stores['sqsStore']['persistence']>;

async function fauxqsModule<T>(relativePath: string): Promise<T> {
  return (await import(new URL(relativePath, import.meta.resolve('fauxqs')).href)) as T;
}

/**
 * fauxqs's `startFauxqs({ dataDir })` always listens on 0.0.0.0, whatever `host` says, so the
 * persistent app is assembled here the way `startFauxqs` does it (fauxqs 2.4.1 `dist/app.js`):
 * load the stored state first, then attach persistence to the stores and their queues.
 */
async function persistentApp(dataDir: string): Promise<ReturnType<typeof buildApp>> {
  const [{ SqsStore }, { SnsStore }, { S3Store }, { PersistenceManager }] = await Promise.all([
    fauxqsModule<{ SqsStore: new () => Stores['sqsStore'] }>('./sqs/sqsStore.js'),
    fauxqsModule<{ SnsStore: new () => Stores['snsStore'] }>('./sns/snsStore.js'),
    fauxqsModule<{ S3Store: new () => Stores['s3Store'] }>('./s3/s3Store.js'),
    fauxqsModule<{ PersistenceManager: new (dataDir: string) => Persistence }>('./persistence.js'),
  ]);
  const stores: Stores = { sqsStore: new SqsStore(), snsStore: new SnsStore(), s3Store: new S3Store() };
  const persistence = new PersistenceManager(dataDir);
  persistence.load(stores.sqsStore, stores.snsStore, stores.s3Store);
  stores.sqsStore.persistence = persistence;
  stores.snsStore.persistence = persistence;
  stores.s3Store.persistence = persistence;
  for (const queue of stores.sqsStore.allQueues()) queue.persistence = persistence;

  const app = buildApp({ logger: false, stores });
  app.addHook('preClose', () => persistence.close());
  return app;
}

const dataDir = process.argv[2];
const app = dataDir ? await persistentApp(dataDir) : buildApp({ logger: false });
const address = new URL(await app.listen({ host: HOST, port: 0 }));

let closing = false;
function shutdown(): void {
  if (closing) return;
  closing = true;
  void app.close().finally(() => process.exit(0));
}
process.stdin.on('end', shutdown).on('close', shutdown).resume();
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);

process.stdout.write(`${JSON.stringify({ listening: { host: HOST, port: Number(address.port) } })}\n`);
