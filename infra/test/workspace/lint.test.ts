import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');
const FIXTURES = join(REPO_ROOT, 'infra/test/workspace/lint-fixtures');
const FLOATING = join(FIXTURES, 'floating-promise.ts');
const AWAITED = join(FIXTURES, 'awaited-promise.ts');
const CYCLE = [join(FIXTURES, 'cycle-a.ts'), join(FIXTURES, 'cycle-b.ts')];
const PACKAGE_IMPORTS = join(FIXTURES, 'package-imports.ts');

interface Diagnostic {
  readonly severity: string;
  readonly rule: string;
  readonly file: string;
  readonly line: number;
}

/**
 * Biome's diagnostics on the files, with the project's rules: the fixtures' configuration extends
 * biome.jsonc and only takes their folder back in. Read from the GitHub reporter, whose one line per
 * diagnostic (`::error title=<rule>,file=<path>,line=<n>,...::<message>`) is a stable format.
 */
async function lint(...files: string[]): Promise<Diagnostic[]> {
  const args = ['exec', 'biome', 'lint', '--reporter=github', `--config-path=${join(FIXTURES, 'biome-fixtures.json')}`, ...files];
  const stdout = await new Promise<string>((done, fail) => {
    execFile('pnpm', args, { cwd: REPO_ROOT, timeout: 60_000 }, (error, out, err) => {
      // Exit code 1: diagnostics were found, which is what is looked at here.
      if (error && error.code !== 1) fail(new Error(`biome lint failed (${error.code}): ${err}`, { cause: error }));
      else done(out);
    });
  });
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('::'))
    .map((line) => {
      const [, severity = '', properties = ''] = /^::(\w+) ([^:]*)::/.exec(line) ?? [];
      const property = (name: string) => new RegExp(`(?:^|,)${name}=([^,]*)`).exec(properties)?.[1] ?? '';
      return { severity, rule: property('title'), file: property('file'), line: Number(property('line')) };
    });
}

describe('the linter', () => {
  let diagnostics: Diagnostic[];
  beforeAll(async () => {
    diagnostics = await lint(FLOATING, AWAITED, ...CYCLE, PACKAGE_IMPORTS);
  }, 60_000);

  it("reports a promise left floating: a port's async method called without await", async () => {
    const lines = (await readFile(FLOATING, 'utf8')).split('\n');
    const call = lines.findIndex((line) => line.includes('queue.retryLater(')) + 1;
    expect(diagnostics.filter(({ file }) => file === FLOATING)).toEqual([
      { severity: 'error', rule: 'lint/nursery/noFloatingPromises', file: FLOATING, line: call },
    ]);
  });

  it('passes the same code with the call awaited', async () => {
    const floating = await readFile(FLOATING, 'utf8');
    expect(await readFile(AWAITED, 'utf8')).toBe(floating.replace('  queue.retryLater(', '  await queue.retryLater('));
    expect(diagnostics.filter(({ file }) => file === AWAITED)).toEqual([]);
  });
  it('refuses a circle of imports, in each file of it', async () => {
    for (const file of CYCLE) {
      const lines = (await readFile(file, 'utf8')).split('\n');
      const line = lines.findIndex((text) => text.startsWith('import ')) + 1;
      expect(diagnostics.filter((diagnostic) => diagnostic.file === file)).toEqual([
        { severity: 'error', rule: 'lint/suspicious/noImportCycles', file, line },
      ]);
    }
  });

  it("refuses a package's file imported by name or by path, and passes an entry its package.json exports", async () => {
    const lines = (await readFile(PACKAGE_IMPORTS, 'utf8')).split('\n');
    const lineOf = (text: string) => lines.findIndex((line) => line.includes(text)) + 1;
    expect(diagnostics.filter(({ file }) => file === PACKAGE_IMPORTS)).toEqual([
      {
        severity: 'error',
        rule: 'lint/style/noRestrictedImports',
        file: PACKAGE_IMPORTS,
        line: lineOf("'@adhoc-scheduler/shared/domain/event'"),
      },
      {
        severity: 'error',
        rule: 'lint/style/noRestrictedImports',
        file: PACKAGE_IMPORTS,
        line: lineOf("'../../../../shared/src/config.js'"),
      },
    ]);
  });
});
