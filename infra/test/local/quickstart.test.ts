import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulators, type Emulators } from '../../src/local/emulators.js';
import { FAST_TIMINGS, startTestScheduler } from './kit.js';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');

let emulators: Emulators;
beforeAll(async () => {
  emulators = await startEmulators({});
});
afterAll(async () => {
  await emulators?.stop();
});

describe('the quickstart', () => {
  it('shows the near and far events arriving and the invalid one on the failure topic', async () => {
    const scheduler = await startTestScheduler(emulators, { env: FAST_TIMINGS });
    const dir = await mkdtemp(join(tmpdir(), 'quickstart-'));
    try {
      const outputs = join(dir, 'outputs.json');
      await writeFile(outputs, JSON.stringify(scheduler.outputs));
      const far = scheduler.config.nearPathWindowSeconds + 4;
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', 'quickstart/src/quickstart.ts', '--outputs', outputs, '--near-seconds', '2', '--far-seconds', String(far)],
        { cwd: REPO_ROOT, timeout: 60_000 },
      );
      expect(stdout).toMatch(/arrived\s+near\s+scheduled .* lateness \+\d+ ms/);
      expect(stdout).toMatch(/arrived\s+far\s+scheduled .* lateness \+\d+ ms/);
      expect(stdout).toMatch(/failure\s+INVALID_DATE/);
      expect(stdout).toContain('All three outcomes arrived.');
    } finally {
      await rm(dir, { recursive: true, force: true });
      await scheduler.stop();
    }
  });
});
