import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULTS, ENV, REASON } from '@adhoc-scheduler/shared';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');
const REASON_CODES_PAGE = 'docs/clients.md';
const CONFIGURATION_PAGE = 'docs/operators/configuration.md';

const read = (path: string): Promise<string> => readFile(join(REPO_ROOT, path), 'utf8');

/** Markdown without its fenced code blocks and inline code, where brackets and `#` are not markup. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** The rows of the table whose header line is `header`, each as its cells (the separator row left out). */
function tableRows(markdown: string, header: string): string[][] {
  const lines = markdown.split('\n');
  const start = lines.indexOf(header);
  if (start < 0) throw new Error(`no table with the header ${header}`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

/** GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const [, heading = ''] of markdown.replace(/^```[\s\S]*?^```$/gm, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** The documentation: the README, BENCHMARKS.md and every page under docs/. */
async function documentationFiles(): Promise<string[]> {
  const pages = (await readdir(join(REPO_ROOT, 'docs'), { recursive: true })).filter((file) => file.endsWith('.md'));
  return ['README.md', 'BENCHMARKS.md', ...pages.map((page) => join('docs', page))];
}

describe('the reason-code table', () => {
  it('has every code of shared/src/domain/reasons.ts once, and no other', async () => {
    const rows = tableRows(await read(REASON_CODES_PAGE), '| reason | when |');
    const codes = rows.map(([cell = '']) => /^`([A-Z_]+)`$/.exec(cell)?.[1] ?? `not a code: ${cell}`);
    expect(codes.toSorted(), `${REASON_CODES_PAGE}: one row per code of REASON`).toEqual(Object.values(REASON).toSorted());
  });
});

describe('the configuration table', () => {
  it('has every variable of shared/src/config.ts once, and no other', async () => {
    const rows = tableRows(await read(CONFIGURATION_PAGE), '| variable | default | meaning |');
    const variables = rows.flatMap(([cell = '']) => [...cell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map(([, name = '']) => name));
    expect(variables.toSorted(), `${CONFIGURATION_PAGE}: each variable of ENV in one row`).toEqual(Object.values(ENV).toSorted());
  });

  it("shows each setting's default as the code has it", async () => {
    const rows = tableRows(await read(CONFIGURATION_PAGE), '| variable | default | meaning |');
    for (const [setting, value] of Object.entries(DEFAULTS)) {
      const variable = ENV[setting as keyof typeof DEFAULTS];
      const [, shown = ''] = rows.find(([cell = '']) => cell.includes(`\`${variable}\``)) ?? [];
      // The default comes first; what follows it in parentheses says where else it differs.
      const leading = shown.replace(/`/g, '').split(' (')[0]?.trim();
      const expected = Array.isArray(value) ? (value.length === 0 ? 'none' : value.join(',')) : String(value);
      expect(leading, `${CONFIGURATION_PAGE}: the default of ${variable}`).toBe(expected);
    }
  });
});

describe('the documentation', () => {
  it('links only to files that exist, and to headings that exist', async () => {
    const broken: string[] = [];
    for (const file of await documentationFiles()) {
      const text = await read(file);
      for (const [, target = ''] of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [path = '', anchor] = target.split('#');
        const resolved = path === '' ? join(REPO_ROOT, file) : resolve(join(REPO_ROOT, dirname(file)), path);
        if (!(await exists(resolved))) {
          broken.push(`${file}: ${target} (no ${relative(REPO_ROOT, resolved)})`);
          continue;
        }
        if (anchor !== undefined && !anchors(await readFile(resolved, 'utf8')).has(anchor)) {
          broken.push(`${file}: ${target} (no heading #${anchor} in ${relative(REPO_ROOT, resolved)})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('keeps the README a front door', async () => {
    expect((await read('README.md')).trimEnd().split('\n').length).toBeLessThanOrEqual(250);
  });
});
