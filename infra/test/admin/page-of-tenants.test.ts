import { describe, expect, it } from 'vitest';
import { TenantRegistry } from '@adhoc-scheduler/shared';
import { pageOfTenants, type TenantFilter } from '../../src/admin/registry.js';

/** A registry of these ids, in this order in its file; every third tenant shares account 222222222222. */
function registryOf(ids: readonly string[]): TenantRegistry {
  return new TenantRegistry(
    {
      tenants: ids.map((id, index) => ({ id, accounts: [String(100_000_000_000 + index), ...(index % 3 === 0 ? ['222222222222'] : [])] })),
    },
    '',
  );
}

/** Every page, followed from the first by its `next`. */
function allPages(registry: TenantRegistry, filter: Omit<TenantFilter, 'after'>): string[][] {
  const pages: string[][] = [];
  let after: string | undefined;
  do {
    const { tenants, next } = pageOfTenants(registry, { ...filter, after });
    pages.push(tenants.map(({ id }) => id));
    after = next;
  } while (after !== undefined);
  return pages;
}

describe('pageOfTenants', () => {
  // Ids out of order in the file, of several lengths, so that their order differs from the file's and from their numbers'.
  const ids = Array.from({ length: 240 }, (_, index) => `t-${(index * 7919) % 240}`);
  const registry = registryOf(ids);
  const inOrder = ['public', ...[...ids].sort()];

  it('pages through every tenant once, the public one first, then by id, whatever the page size', () => {
    for (const limit of [1, 2, 7, 50, 239, 240, 241, 1000]) {
      const pages = allPages(registry, { limit });
      expect(pages.flat()).toEqual(inOrder);
      expect(pages.slice(0, -1).every((page) => page.length === limit)).toBe(true);
    }
  });

  it('filters by id prefix and by account before it pages, and continues after an id it does not hold', () => {
    expect(allPages(registry, { prefix: 't-1', limit: 10 }).flat()).toEqual(inOrder.filter((id) => id.startsWith('t-1')));
    const sharing = allPages(registry, { account: '222222222222', limit: 9 }).flat();
    expect(sharing).toEqual(inOrder.filter((id) => id !== 'public' && ids.indexOf(id) % 3 === 0));
    expect(pageOfTenants(registry, { after: 't-100a', limit: 3 }).tenants.map(({ id }) => id)).toEqual(['t-101', 't-102', 't-103']);
    expect(pageOfTenants(registry, { after: 'public', limit: 1 })).toEqual({ tenants: [registry.tenant('t-0')], next: 't-0' });
    expect(pageOfTenants(registry, { prefix: 'nobody', limit: 5 })).toEqual({ tenants: [], next: undefined });
  });
});
