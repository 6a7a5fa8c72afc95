import { describe, expect, it } from 'vitest';
import { addByKind, addByShape, itemKind, writeShape, writtenIds } from '../src/cost/item-kinds.js';

describe('the kinds of items a write names', () => {
  it("tells the table's items apart by their ids", () => {
    expect(
      [
        'o-ab12-1795838340250',
        's-c-ab12',
        'm-5f1d',
        'c-ab12',
        'p#c-ab12#h',
        'l#c-ab12#blue',
        '#tenant#acme',
        '#ends#acme#1795838220',
        '#loader-cursor',
        'e#m1',
        'n-m1',
        'j#b-1',
        'r#acme#3',
        'x',
      ].map(itemKind),
    ).toEqual([
      'occurrence',
      'series',
      'event',
      'event',
      'payload',
      'label entry',
      'tenant counters',
      'end counts',
      'loader cursor',
      'last error',
      'notice',
      'job',
      'refusals',
      'other',
    ]);
  });

  it('finds the items of single writes, transactions and batches', () => {
    expect(writtenIds({ Item: { id: 's-c-1' } })).toEqual(['s-c-1']);
    expect(writtenIds({ Key: { id: '#tenant#acme' } })).toEqual(['#tenant#acme']);
    expect(
      writtenIds({
        TransactItems: [
          { Put: { Item: { id: 'o-1-2' } } },
          { Update: { Key: { id: '#tenant#acme' } } },
          { Delete: { Key: { id: 'l#c-1#x' } } },
        ],
      }),
    ).toEqual(['o-1-2', '#tenant#acme', 'l#c-1#x']);
    expect(
      writtenIds({ RequestItems: { table: [{ PutRequest: { Item: { id: 'p#c-1' } } }, { DeleteRequest: { Key: { id: 'l#c-1#x' } } }] } }),
    ).toEqual(['p#c-1', 'l#c-1#x']);
  });

  it("shares a write's units evenly among its items, and counts a write naming none apart", () => {
    const byKind: Record<string, number> = {};
    addByKind(byKind, { TransactItems: [{ Update: { Key: { id: 's-c-1' } } }, { Update: { Key: { id: '#tenant#acme' } } }] }, 4);
    addByKind(byKind, { Item: { id: 's-c-2' } }, 1);
    addByKind(byKind, {}, 3);
    expect(byKind).toEqual({ series: 3, 'tenant counters': 2, unnamed: 3 });
  });
});

describe('the shapes of writes', () => {
  it('names a write by its operation, whether it is conditional, and the kinds of its items, each once', () => {
    expect(writeShape('UpdateItem', { Key: { id: '#tenant#acme' }, ConditionExpression: 'a < :b' })).toBe(
      'UpdateItem (conditional): tenant counters',
    );
    expect(writeShape('UpdateItem', { Key: { id: '#tenant#acme' } })).toBe('UpdateItem: tenant counters');
    expect(
      writeShape('TransactWriteItems', {
        TransactItems: [
          { Update: { Key: { id: 's-c-1' } } },
          { Update: { Key: { id: '#tenant#acme' } } },
          { Put: { Item: { id: 's-c-2' } } },
        ],
      }),
    ).toBe('TransactWriteItems: series + tenant counters');
    expect(writeShape('BatchExecuteStatement', {})).toBe('BatchExecuteStatement: unnamed');
  });

  it('counts the writes of each shape, the items they named and their units: units over writes is what one costs', () => {
    const byShape: Record<string, { requests: number; items: number; units: number }> = {};
    const occurrences = { TransactItems: [{ Put: { Item: { id: 'o-1-1' } } }, { Put: { Item: { id: 'o-1-2' } } }] };
    addByShape(byShape, 'TransactWriteItems', occurrences, 4);
    addByShape(byShape, 'TransactWriteItems', occurrences, 4);
    addByShape(byShape, 'UpdateItem', { Key: { id: 's-c-1' }, ConditionExpression: 'version = :v' }, 3);
    expect(byShape).toEqual({
      'TransactWriteItems: occurrence': { requests: 2, items: 4, units: 8 },
      'UpdateItem (conditional): series': { requests: 1, items: 1, units: 3 },
    });
  });
});
