import { describe, expect, it } from 'vitest';
import { estimatedStandInWriteUnits, estimatedStatementWriteUnits, isBatchStandIn } from '../src/cost/usage-meter.js';

describe('write units of a PartiQL batch', () => {
  it('bill an insert by its item, a unit per started KB, plus the tenant index when the item has its key', () => {
    const insert = (payload: string, tenantShard?: string) => ({
      Statement: `INSERT INTO "t" VALUE {'id': ?, 'payload': ?${tenantShard ? ", 'tenantShard': ?" : ''}}`,
      Parameters: ['m-1', payload, ...(tenantShard ? [tenantShard] : [])],
    });
    expect(estimatedStatementWriteUnits([insert('x')])).toBe(1);
    expect(estimatedStatementWriteUnits([insert('x'.repeat(3000))])).toBe(3);
    expect(estimatedStatementWriteUnits([insert('x', 'acme#s3')])).toBe(2);
  });

  it('bill each update one unit, applied or not', () => {
    const update = { Statement: `UPDATE "t" SET "state" = ? WHERE id = ? AND "state" = ?`, Parameters: ['emitted', 'm-1', 'queued'] };
    expect(estimatedStatementWriteUnits([update, update, update])).toBe(3);
  });
});

describe('write units of a transaction that stands in for a PartiQL batch', () => {
  it('are those of the same items written as statements; a transaction that writes a counter is priced as reported', () => {
    const put = (payload: string, tenantShard?: string) => ({
      Put: { Item: { id: 'm-1', payload, ...(tenantShard ? { tenantShard } : {}) } },
    });
    const end = { Update: { Key: { id: 'm-1' } } };
    const items = [put('x'), put('x'.repeat(3000), 'acme#s3'), end];
    expect(isBatchStandIn(items)).toBe(true);
    expect(estimatedStandInWriteUnits(items)).toBe(1 + 4 + 1);
    expect(isBatchStandIn([end, { Update: { Key: { id: '#tenant#acme' } } }])).toBe(false);
  });
});
