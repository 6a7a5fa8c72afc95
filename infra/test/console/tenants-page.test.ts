import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Pause, TenantsDocument } from '@adhoc-scheduler/shared';
import { AdminConsoleBackend } from '../../src/console/admin-backend.js';
import { startConsole, type ConsoleServer } from '../../src/console/server.js';
import type { TenantStates, TenantStatesRead } from '../../src/console/tenant-states.js';

const TENANTS = 100_000;
const PAGE = 50;
const accountOf = (index: number) => String(100_000_000_000 + index);

/** Every tenant's id in the listing's order: the public one first, then by id. */
const LISTING_ORDER = ['public', ...Array.from({ length: TENANTS }, (_, index) => `tenant-${index}`).sort((a, b) => (a < b ? -1 : 1))];

/** The tenants' counters and pauses, made up, with every tenant each read asked for. */
class CountingStates implements TenantStates {
  readonly counterReads: string[] = [];

  async read(tenants: readonly string[]): Promise<TenantStatesRead> {
    this.counterReads.push(...tenants);
    const pause: Pause = { pausedAt: Date.parse('2026-11-25T09:00:00Z'), note: 'maintenance', pausedBy: 'operator o', owner: 'operator' };
    return {
      openEvents: tenants.map((id) => id.length),
      pauses: { pauses: new Map(tenants.filter((id) => id === 'tenant-1').map((id) => [id, pause])) },
    };
  }
}

let dir: string;
let states: CountingStates;
let backend: AdminConsoleBackend;
let server: ConsoleServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'console-tenants-'));
  const document: TenantsDocument = {
    tenants: Array.from({ length: TENANTS }, (_, index) => ({
      id: `tenant-${index}`,
      accounts: [accountOf(index)],
      ...(index === 0 ? { maxOpenEvents: 80 } : {}),
    })),
  };
  const tenantsFile = join(dir, 'tenants.json');
  await writeFile(tenantsFile, JSON.stringify(document));
  states = new CountingStates();
  // No service: every read of a tenant's state goes through the counting port, and nothing else is read.
  backend = new AdminConsoleBackend({ kind: 'local', outputs: join(dir, 'no-outputs.json') }, { tenantsFile, tenantStates: states });
  // As serveConsole does before it listens.
  backend.readRegistry();
  server = await startConsole({ backend, port: 0 });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  states.counterReads.length = 0;
});

/** A page of the console, its status and the ids its tenants table lists, in order. */
async function view(path: string): Promise<{ status: number; body: string; ids: string[]; next: string | undefined }> {
  const response = await fetch(`${server.url}${path}`);
  const body = await response.text();
  const ids = [...body.matchAll(/<th scope="row"><a href="\/overview\?tenant=[^"]*">([^<]*)<\/a>/g)].map(([, id]) => id ?? '');
  const next = /<a href="([^"]*)" rel="next">Next page<\/a>/.exec(body)?.[1]?.replaceAll('&amp;', '&');
  return { status: response.status, body, ids, next };
}

describe('the tenants view with 100,000 registered tenants', () => {
  it("lists the first page, the public tenant first, then by id, reading the counters and pauses of that page's tenants alone", async () => {
    const first = await view('/');
    expect(first.status).toBe(200);
    const expected = LISTING_ORDER.slice(0, PAGE);
    expect(first.ids).toEqual(expected);
    expect(states.counterReads).toEqual(expected);
    // What the states said, on each row.
    expect(first.body).toContain('<td>8 of 80 (10 %)</td>');
    expect(first.body).toContain('<td>by its operator since 2026-11-25T09:00:00.000Z (operator o): maintenance</td>');
    expect(first.next).toBe(`/?after=${expected.at(-1)}`);

    states.counterReads.length = 0;
    const second = await view(first.next ?? '');
    expect(second.ids).toEqual(LISTING_ORDER.slice(PAGE, 2 * PAGE));
    expect(states.counterReads).toEqual(second.ids);
    expect(second.body).toContain('<a href="/">First page</a>');
  });

  it('searches by id prefix and by account, a page of the size asked at a time, and says when none matches', async () => {
    const byPrefix = await view('/?prefix=tenant-9999&limit=6');
    expect(byPrefix.ids).toEqual(['tenant-9999', 'tenant-99990', 'tenant-99991', 'tenant-99992', 'tenant-99993', 'tenant-99994']);
    expect(byPrefix.next).toBe('/?prefix=tenant-9999&limit=6&after=tenant-99994');
    // The search is kept in the form.
    expect(byPrefix.body).toContain('<input name="prefix" value="tenant-9999"');
    expect(byPrefix.body).toContain('<input type="hidden" name="limit" value="6">');
    const rest = await view(byPrefix.next ?? '');
    expect(rest.ids).toEqual(['tenant-99995', 'tenant-99996', 'tenant-99997', 'tenant-99998', 'tenant-99999']);
    expect(rest.next).toBeUndefined();
    expect(states.counterReads).toEqual([...byPrefix.ids, ...rest.ids]);

    expect((await view(`/?account=${accountOf(42_042)}&prefix=`)).ids).toEqual(['tenant-42042']);
    states.counterReads.length = 0;
    const none = await view('/?prefix=nobody');
    expect(none.ids).toEqual([]);
    expect(none.body).toContain('<p role="status">No tenant matches.</p>');
    expect(states.counterReads).toEqual([]);
  });

  it('escapes what the URL gives it, and refuses a page size out of bounds', async () => {
    const markup = '"><script>alert(1)</script>';
    const escaped = await view(`/?prefix=${encodeURIComponent(markup)}&account=${encodeURIComponent("<b>'")}`);
    expect(escaped.status).toBe(200);
    expect(escaped.body).not.toContain('<script>');
    expect(escaped.body).not.toContain('<b>');
    expect(escaped.body).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(escaped.body).toContain('value="&lt;b&gt;&#39;"');

    for (const limit of ['0', '101', '2.5', 'many', '<i>']) {
      const refused = await view(`/?limit=${encodeURIComponent(limit)}`);
      expect(refused.status).toBe(400);
      expect(refused.body).toContain('is not a whole number from 1 to 100');
      expect(refused.body).not.toContain('<i>');
    }
    expect(states.counterReads).toEqual([]);
  });

  it('looks a chosen tenant up by id, reading its counter alone, and defaults to the first registered beside the public tenant', async () => {
    expect(await backend.tenant('tenant-77')).toMatchObject({ id: 'tenant-77', openEvents: 9, pause: { paused: false } });
    expect(await backend.tenant('tenant-1')).toMatchObject({ pause: { paused: true, owner: 'operator', note: 'maintenance' } });
    expect(await backend.tenant('nobody')).toBeUndefined();
    expect(await backend.defaultTenant()).toBe('tenant-0');
    expect(states.counterReads).toEqual(['tenant-77', 'tenant-1']);
  });
});
