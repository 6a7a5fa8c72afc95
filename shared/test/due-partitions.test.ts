import { describe, expect, it } from 'vitest';
import { DuePartitionsMerge, type OpenPartition } from '../src/adapters/dynamodb-due-partitions.js';
import { compareByDue, type ListingPosition } from '../src/domain/tenant-index.js';

const DUE = 1_780_000_000_000;

/**
 * Partitions as the index gives them: by due time alone, entries due in the same millisecond in
 * the order they are listed here (not by id), `pageItems` a read; counts the reads.
 */
function partitions(byKey: Readonly<Record<string, readonly ListingPosition[]>>, pageItems: number) {
  const reads: string[] = [];
  const open: OpenPartition = (key) => {
    const entries = [...(byKey[key] ?? [])].sort((a, b) => a.dueAt - b.dueAt);
    let next = 0;
    return async () => {
      reads.push(key);
      const page = entries.slice(next, next + pageItems);
      next += page.length;
      return { entries: page, done: next >= entries.length };
    };
  };
  return { open, reads, keys: Object.keys(byKey) };
}

/** Every page of `limit` from the start, each from the last position the one before it took. */
async function pages(byKey: Readonly<Record<string, readonly ListingPosition[]>>, pageItems: number, limit: number) {
  const { open, keys } = partitions(byKey, pageItems);
  const found: ListingPosition[][] = [];
  let after: ListingPosition | undefined;
  for (;;) {
    const merge = new DuePartitionsMerge(keys, open, after);
    const page = await merge.take(limit);
    if (page.length > 0) found.push(page);
    after = page.at(-1);
    if (after === undefined || !(await merge.more())) return found;
  }
}

/** `count` ids spread over `shards` partitions, each partition's in an order other than by id. */
function spread(count: number, shards: number, dueAt: (i: number) => number = () => DUE) {
  const byKey: Record<string, ListingPosition[]> = {};
  for (let i = count - 1; i >= 0; i--) {
    const key = `acme#s${(i * 7) % shards}`;
    byKey[key] = [...(byKey[key] ?? []), { dueAt: dueAt(i), id: `t-${String(i).padStart(3, '0')}` }];
  }
  return byKey;
}

describe('DuePartitionsMerge', () => {
  it('takes each of 250 entries due in the same millisecond once, in pages of 100, by id', async () => {
    const byKey = spread(250, 4);
    const found = await pages(byKey, 3, 100);
    expect(found.map((page) => page.length)).toEqual([100, 100, 50]);
    expect(found.flat()).toEqual(Object.values(byKey).flat().sort(compareByDue));
  });

  it('orders entries by due time then id across partitions, whatever the reads', async () => {
    const byKey = spread(60, 3, (i) => DUE + (i % 5));
    for (const pageItems of [1, 2, 7, 100]) {
      const found = await pages(byKey, pageItems, 9);
      expect(found.flat()).toEqual(Object.values(byKey).flat().sort(compareByDue));
    }
  });

  it('reads a partition on while its head is due in the millisecond its last read ended', async () => {
    // One read gives t-2 alone; t-1, due in the same millisecond, comes on the next.
    const { open } = partitions(
      {
        a: [
          { dueAt: DUE, id: 't-2' },
          { dueAt: DUE, id: 't-1' },
        ],
      },
      1,
    );
    expect(await new DuePartitionsMerge(['a'], open, undefined).take(1)).toEqual([{ dueAt: DUE, id: 't-1' }]);
  });

  it('starts after the position given, and says whether anything follows', async () => {
    const { open } = partitions(spread(10, 2), 4);
    const merge = new DuePartitionsMerge(['acme#s0', 'acme#s1'], open, { dueAt: DUE, id: 't-006' });
    expect((await merge.take(5)).map(({ id }) => id)).toEqual(['t-007', 't-008', 't-009']);
    expect(await merge.more()).toBe(false);
    const fresh = new DuePartitionsMerge(['acme#s0', 'acme#s1'], partitions(spread(10, 2), 4).open, undefined);
    await fresh.take(9);
    expect(await fresh.more()).toBe(true);
  });

  it('reads a partition once when its first read holds all it has', async () => {
    const { open, reads } = partitions({ a: [{ dueAt: DUE, id: 't-1' }], b: [{ dueAt: DUE + 1, id: 't-0' }] }, 5);
    expect((await new DuePartitionsMerge(['a', 'b'], open, undefined).take(10)).map(({ id }) => id)).toEqual(['t-1', 't-0']);
    expect(reads).toEqual(['a', 'b']);
  });
});
