import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { LEGACY_BUCKET_INDEX, migrateIndexEntries } from '@adhoc-scheduler/shared';
import { commandLine, LOCATION_OPTIONS, noPositionals } from './arguments.js';
import { count, type Output } from './format.js';
import { locationOf, withTable } from './location.js';
import { USAGE } from './usage.js';

/**
 * `table migrate`: moves the entries of the time-bucket index earlier versions kept into the
 * tenant index (migrateIndexEntries). While the table still has that index, a version reading it
 * may be running: held events stay there for it, and only stored events move (the loader of
 * either version reads them in the tenant index). Once the index is gone, everything moves.
 */
export async function tableMigrate(args: string[], output: Output): Promise<number> {
  const command = 'table migrate';
  const line = commandLine(
    command,
    args,
    { json: { type: 'boolean', default: false }, ...LOCATION_OPTIONS },
    { usage: USAGE.tableMigrate, output },
  );
  if (line === undefined) return 0;
  const { values, positionals } = line;
  noPositionals(positionals, command);
  const location = locationOf(values, command);
  const result = await withTable(location, async (client, tableName) => {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const legacyIndex = (Table?.GlobalSecondaryIndexes ?? []).some(({ IndexName }) => IndexName === LEGACY_BUCKET_INDEX.name);
    const scope = legacyIndex ? 'stored-events' : 'all';
    return { tableName, legacyIndex, scope, ...(await migrateIndexEntries(client, tableName, scope)) };
  });
  if (values.json) {
    output.out(JSON.stringify(result, null, 2));
    return 0;
  }
  const { found, held, stored, cleared, left, skipped } = result;
  output.out(
    `table ${result.tableName}: ${count(found)} items with a ${LEGACY_BUCKET_INDEX.partitionKey} key; ` +
      `${count(stored)} stored events and ${count(held)} held events moved to the tenant index, ${count(cleared)} stale keys removed` +
      (skipped === 0 ? '.' : `; ${count(skipped)} changed while read, or of no known shape: left (run it again).`),
  );
  if (result.legacyIndex)
    output.out(
      `The table still has ${LEGACY_BUCKET_INDEX.name}: ${count(left)} held events stay in it for the version reading it. ` +
        'Deploy this version (which removes the index), then run this command again to move them.',
    );
  else if (found === 0) output.out('Nothing left to move: the table is on one index.');
  return 0;
}
