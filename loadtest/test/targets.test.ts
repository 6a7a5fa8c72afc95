import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_CODE, verdict } from '../src/exit.js';
import { parseCli } from '../src/options.js';
import type { RunResult } from '../src/report/results.js';
import { summary } from '../src/report/summary.js';
import { targetsTable, type TargetCheck } from '../src/report/targets.js';
import { SCENARIOS } from '../src/scenarios/catalog.js';

const REPO_ROOT = join(import.meta.dirname, '..', '..');

const met: TargetCheck = { name: 'missing', target: '0', actual: '0', met: true };
const missed: TargetCheck = { name: 'lateness p99', target: '≤ 15 ms', actual: '22 ms', met: false };

describe('the targets', () => {
  it('are the table the contributing guide shows', async () => {
    const guide = await readFile(join(REPO_ROOT, 'docs/contributing.md'), 'utf8');
    expect(
      guide.includes(`\n${targetsTable(SCENARIOS)}\n`),
      `docs/contributing.md shows the targets as loadtest/src/scenarios set them:\n${targetsTable(SCENARIOS)}`,
    ).toBe(true);
  });
});

describe('a missed target', () => {
  it('leaves the exit code 0 unless --fail-on-miss is given, and then makes it 3', () => {
    expect(parseCli(['steady'])?.failOnMiss).toBe(false);
    const failOnMiss = parseCli(['steady', '--fail-on-miss'])?.failOnMiss ?? false;
    expect(failOnMiss).toBe(true);

    expect(verdict([met, missed], false).code).toBe(EXIT_CODE.done);
    expect(verdict([met, missed], failOnMiss).code).toBe(EXIT_CODE.targetMissed);
    expect(EXIT_CODE.targetMissed).toBe(3);
    expect(verdict([met], failOnMiss).code).toBe(EXIT_CODE.done);
  });

  it('is counted under the targets of the summary, with the exit code it makes', () => {
    const result = { title: 'steady', delivery: undefined, details: {}, cost: undefined, targets: [met, missed] } as unknown as RunResult;
    const lines = summary(result, '/tmp/out').split('\n');
    expect(lines).toContain('    MISS  lateness p99: 22 ms (target ≤ 15 ms)');
    expect(lines).toContain('  1 of 2 targets missed; exit code 0 (--fail-on-miss makes a miss exit 3)');
    expect(summary(result, '/tmp/out', true)).toContain('  1 of 2 targets missed: exit code 3 (--fail-on-miss)');
    expect(summary({ ...result, targets: [met] }, '/tmp/out')).toContain('  every target met (1)');
  });
});
