import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCli } from '../src/options.js';
import type { RunResult } from '../src/report/results.js';
import { runScenario } from '../src/run.js';

const outDir = await mkdtemp(join(tmpdir(), 'loadtest-smoke-'));

afterAll(async () => {
  await rm(outDir, { recursive: true, force: true });
});

describe('the steady scenario, through the local service in its own process', () => {
  it('delivers every event exactly once and none early, and writes the results, plots and report', async () => {
    const options = parseCli([
      'steady',
      '--events',
      '50',
      '--seconds',
      '3',
      '--ahead',
      '3',
      '--settle-seconds',
      '1',
      '--no-progress',
      '--out',
      outDir,
    ]);
    if (!options) throw new Error('no options');

    const { result } = await runScenario(options, 'smoke test');

    const counts = result.delivery?.counts;
    // A few seconds of warm-up events go first; they are checked like the measured ones.
    expect(counts?.warmup).toBeGreaterThan(0);
    expect(counts).toMatchObject({
      expected: 50 + (counts?.warmup ?? 0),
      delivered: 50 + (counts?.warmup ?? 0),
      missing: 0,
      duplicated: 0,
      early: 0,
      earlyPublished: 0,
      unexpected: 0,
      wrongScheduledAt: 0,
      publishFailed: 0,
    });
    // Counted on the service's own clients: one publish to the target per event, alone or in a batch.
    expect((result.usage?.sns.publishes ?? 0) + (result.usage?.sns.publishBatchEntries ?? 0)).toBe(counts?.expected);
    const written = JSON.parse(await readFile(join(outDir, 'results.json'), 'utf8')) as RunResult;
    expect(written.delivery?.latenessMs?.count).toBe(50);
    for (const png of ['lateness-linear.png', 'lateness-log.png']) {
      expect((await readFile(join(outDir, png))).subarray(1, 4).toString('latin1')).toBe('PNG');
    }
    expect(await readFile(join(outDir, 'report.html'), 'utf8')).toContain('<svg');
  });
});

describe('the neighbour scenario, its noisy tenant a client in a thread of its own', () => {
  it("answers each of the noisy tenant's requests once, and delivers the quiet tenant's events once, none early", async () => {
    const neighbourDir = join(outDir, 'neighbour');
    const options = parseCli([
      'neighbour',
      '--events',
      '2000',
      '--quiet-events',
      '50',
      '--seconds',
      '10',
      '--ahead',
      '20',
      '--no-progress',
      '--out',
      neighbourDir,
    ]);
    if (!options) throw new Error('no options');

    const { result } = await runScenario(options, 'smoke test');

    // Received in the client's thread, counted there, and handed back to the run.
    expect(result.details.noisy).toMatchObject({
      published: 2000,
      publishFailed: 0,
      requests: 2000,
      answered: 2000,
      unanswered: 0,
      answeredMoreThanOnce: 0,
      noticesOfNoRequest: 0,
      unexpectedReasons: [],
    });
    expect(result.delivery?.counts).toMatchObject({ expected: 45, delivered: 45, missing: 0, duplicated: 0, early: 0 });
    expect(result.details.quiet).toMatchObject({ cancels: 5, cancelledEventsDelivered: 0 });
  }, 180_000);
});
