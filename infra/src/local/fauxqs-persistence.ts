import type { DatabaseSync } from 'node:sqlite';
import { buildApp, type BuildAppOptions } from 'fauxqs';

export type FauxqsApp = ReturnType<typeof buildApp>;
type Stores = NonNullable<BuildAppOptions['stores']>;
type Persistence = NonNullable<Stores['sqsStore']['persistence']>;

/** A module of fauxqs's own (`dist/…`), which its package does not export. */
export async function fauxqsModule<T>(relativePath: string): Promise<T> {
  return (await import(new URL(relativePath, import.meta.resolve('fauxqs')).href)) as T;
}

/**
 * fauxqs with its state in SQLite in `dataDir`. Its `startFauxqs({ dataDir })` always listens on
 * 0.0.0.0, whatever `host` says, so the persistent app is assembled here the way `startFauxqs`
 * does it (fauxqs 2.4.1 `dist/app.js`): load the stored state first, then attach persistence to
 * the stores and their queues.
 */
export async function persistentApp(dataDir: string): Promise<FauxqsApp> {
  const [{ SqsStore }, { SnsStore }, { S3Store }, { PersistenceManager }] = await Promise.all([
    fauxqsModule<{ SqsStore: new () => Stores['sqsStore'] }>('./sqs/sqsStore.js'),
    fauxqsModule<{ SnsStore: new () => Stores['snsStore'] }>('./sns/snsStore.js'),
    fauxqsModule<{ S3Store: new () => Stores['s3Store'] }>('./s3/s3Store.js'),
    fauxqsModule<{ PersistenceManager: new (dataDir: string) => Persistence }>('./persistence.js'),
  ]);
  const stores: Stores = { sqsStore: new SqsStore(), snsStore: new SnsStore(), s3Store: new S3Store() };
  const persistence = new PersistenceManager(dataDir);
  const { db } = persistence as unknown as { readonly db: DatabaseSync };
  // fauxqs keeps its SQLite file in write-ahead-log mode and, by SQLite's default, syncs the
  // disk at every message: the input topic then took 895 publishes a second here, against 2,700
  // with NORMAL (loadtest ingest, on disk, 2026-11-24). In that mode NORMAL syncs at checkpoints
  // only: what was written survives the service's crash or kill -9 whole; only the machine's own
  // crash (a power cut) can lose its last moments.
  db.exec('PRAGMA synchronous = NORMAL');
  persistence.load(stores.sqsStore, stores.snsStore, stores.s3Store);
  stores.sqsStore.persistence = persistence;
  stores.snsStore.persistence = persistence;
  stores.s3Store.persistence = persistence;
  for (const queue of stores.sqsStore.allQueues()) queue.persistence = persistence;

  const app = buildApp({ logger: false, stores });
  const commits = commitPerAnswer(db, persistence);
  // Before any answer leaves: what it acknowledges is committed first.
  // (A commit that fails fails the answer: the client retries what it asked.)
  app.addHook('onSend', async (_request, _reply, payload) => {
    commits.commit();
    return payload;
  });
  app.addHook('preClose', () => {
    commits.commit();
    persistence.close();
  });
  return app;
}

/** The write-through calls fauxqs makes for each message: sent, received, its visibility changed or ended, deleted. */
const MESSAGE_WRITES = ['insertMessage', 'deleteMessage', 'updateMessageInflight', 'updateMessageReady'] as const;

/**
 * Makes fauxqs's writes of a message's changes one commit per answer, not one per message. fauxqs
 * writes each change through as a statement of its own, each its own commit: a receive of ten
 * messages was ten commits, and on disk those statements were about two fifths of its work
 * under a flood (a CPU profile of `loadtest neighbour`), all of it on the event loop that fans
 * out every publish. Here the first such write opens a transaction, and it is committed before
 * the next answer is sent (`commit`, from the app's onSend hook), or at the end of the event
 * loop's turn for writes no answer waits on (a visibility timeout running out). What an answer
 * acknowledges is in the file before the answer leaves, as before.
 */
export function commitPerAnswer(db: DatabaseSync, persistence: Persistence): { commit(): void } {
  let open = false;
  const commit = (): void => {
    if (!open) return;
    open = false;
    try {
      db.exec('COMMIT');
    } catch (error) {
      // The writes are not in the file; their answer fails, and the next write starts afresh.
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    }
  };
  const commitAtTurnEnd = (): void => {
    try {
      commit();
    } catch (error) {
      process.stderr.write(`fauxqs: could not commit writes no answer waited on: ${String(error)}\n`);
    }
  };
  const target = persistence as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of MESSAGE_WRITES) {
    const write = target[name]?.bind(persistence);
    if (write === undefined) throw new Error(`fauxqs's persistence has no ${name}: the version changed; see fauxqs-persistence.ts`);
    target[name] = (...args: unknown[]) => {
      // Inside fauxqs's own transaction (see below) the write is that transaction's.
      if (!open && !db.isTransaction) {
        db.exec('BEGIN');
        open = true;
        setImmediate(commitAtTurnEnd);
      }
      return write(...args);
    };
  }
  // fauxqs's own transactions (bulk deletes, purges) begin with BEGIN: the open one is committed first.
  const transaction = target.transaction?.bind(persistence);
  if (transaction === undefined) throw new Error("fauxqs's persistence has no transaction: the version changed; see fauxqs-persistence.ts");
  target.transaction = (...args: unknown[]) => {
    commit();
    return transaction(...args);
  };
  return { commit };
}
