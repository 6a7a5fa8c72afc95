import { describe, expect, it } from 'vitest';
import { descendantsOf, parsePs, stillRunning } from '../src/compare/processes.js';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { knownSettings, registeredTenantsForBoth, startArgs, takesConsolePort, takesTenantImport } from '../src/compare/service.js';

describe('starting and stopping a side', () => {
  it('gives every port to the system, and the console port only to a tree that has a console', () => {
    const files = { outputs: '/w/outputs.json', tenants: '/w/tenants.json', dataDir: '/w/data' };
    expect(startArgs(files, true).join(' ')).toBe(
      '--silent start --port 0 --dynamodb-port 0 --console-port 0 --outputs /w/outputs.json --tenants /w/tenants.json --data-dir /w/data',
    );
    expect(startArgs({ ...files, dataDir: undefined }, false).join(' ')).toBe(
      '--silent start --port 0 --dynamodb-port 0 --outputs /w/outputs.json --tenants /w/tenants.json --in-memory',
    );
    expect(takesConsolePort("Usage: scripts/start [--port N] [--console-port N]\n'console-port': { type: 'string' }")).toBe(true);
    expect(takesConsolePort('Usage: scripts/start [--port N] [--dynamodb-port N]')).toBe(false);
  });

  it('finds every process below the service, the emulators in groups of their own included', () => {
    const rows = parsePs(
      [
        '  10     1    10 pnpm start',
        '  11    10    11 sh -c tsx main.ts',
        '  12    11    11 node main.ts',
        '  13    12    13 java -jar DynamoDBLocal.jar',
        '  99     1    99 other',
        '',
      ].join('\n'),
    );
    expect(rows[3]).toEqual({ pid: 13, ppid: 12, pgid: 13, command: 'java -jar DynamoDBLocal.jar' });
    expect(descendantsOf(rows, 10).map((row) => row.pid)).toEqual([11, 12, 13]);
  });

  it('takes a process recorded at the stop for still running only while its pid, group and command are the same', () => {
    const recorded = parsePs(
      ['  12    11    11 node main.ts', '  13    12    13 java -jar DynamoDBLocal.jar', '  14    12    14 node fauxqs.ts'].join('\n'),
    );
    const now = parsePs(
      [
        '  12    11    11 node main.ts',
        // Its pid since given to another program, in a group of its own that a signal to 13 would kill.
        '  13     1    13 vitest run',
        '',
      ].join('\n'),
    );
    expect(stillRunning(recorded, now).map((row) => row.pid)).toEqual([12]);
  });
});

describe("a side's tenants file", () => {
  it('leaves out the settings its version’s registry does not know, and keeps the ones it does', () => {
    const tree = mkdtempSync(join(tmpdir(), 'known-settings-'));
    mkdirSync(join(tree, 'shared', 'schema'), { recursive: true });
    const entry = { properties: { id: {}, accounts: {}, maxOpenEvents: {} } };
    writeFileSync(
      join(tree, 'shared', 'schema', 'tenants.schema.json'),
      JSON.stringify({ properties: { public: { properties: { maxOpenEvents: {} } }, tenants: { items: entry } } }),
    );
    const quotas = { maxOpenEvents: 10, maxIngestPerSecond: 20, maxControlPerSecond: 30 };
    expect(knownSettings({ public: quotas, tenants: [{ id: 'acme', accounts: ['111111111111'], ...quotas }] }, tree)).toEqual({
      public: { maxOpenEvents: 10 },
      tenants: [{ id: 'acme', accounts: ['111111111111'], maxOpenEvents: 10 }],
    });
    // This tree's own schema knows every setting the harness writes.
    const own = { public: quotas, tenants: [{ id: 'acme', accounts: ['111111111111'], ...quotas }] };
    expect(knownSettings(own, join(import.meta.dirname, '..', '..'))).toEqual(own);
  });
});

describe('tenants registered before the load in a comparison', () => {
  it('go to both sides when the base has tenant import, and to neither when it has not', () => {
    const tree = (usage: string | undefined) => {
      const dir = mkdtempSync(join(tmpdir(), 'tenant-import-'));
      if (usage !== undefined) {
        mkdirSync(join(dir, 'infra', 'src', 'admin'), { recursive: true });
        writeFileSync(join(dir, 'infra', 'src', 'admin', 'usage.ts'), usage);
      }
      return dir;
    };
    const withImport = tree('Usage: scripts/admin tenant import FILE [--tenants FILE] [--outputs FILE]');
    const addOnly = tree('Usage: scripts/admin tenant add <id> --account ID');
    const noCli = tree(undefined);
    expect(takesTenantImport(withImport)).toBe(true);
    expect(takesTenantImport(addOnly)).toBe(false);
    expect(takesTenantImport(noCli)).toBe(false);
    // This tree has it.
    expect(takesTenantImport(join(import.meta.dirname, '..', '..'))).toBe(true);

    expect(registeredTenantsForBoth(10_000, withImport)).toEqual({ count: 10_000, leftOut: undefined });
    expect(registeredTenantsForBoth(10_000, addOnly)).toEqual({
      count: undefined,
      leftOut: 'left out on both sides: the base has no tenant import',
    });
    expect(registeredTenantsForBoth(undefined, addOnly)).toEqual({ count: undefined, leftOut: undefined });
  });
});
