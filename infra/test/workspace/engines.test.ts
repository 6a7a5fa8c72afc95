import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { delimiter, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');

describe("the workspace's Node", () => {
  it('checks engines against the Node its scripts run on: the version installed for the node devDependency', async () => {
    const workspace = await readFile(join(REPO_ROOT, 'pnpm-workspace.yaml'), 'utf8');
    const { version } = JSON.parse(await readFile(join(REPO_ROOT, 'node_modules/node/package.json'), 'utf8')) as { version: string };
    expect(workspace.match(/^nodeVersion: (\S+)$/m)?.[1]).toBe(version);
  });

  it('runs a documented pnpm command without an engines warning when pnpm itself runs on the system Node', async () => {
    // As from a shell: without the workspace's node_modules/.bin, pnpm starts on whatever `node` the system has.
    const path = (process.env.PATH ?? '')
      .split(delimiter)
      .filter((entry) => !entry.includes('node_modules'))
      .join(delimiter);
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((done, fail) => {
      execFile(
        'pnpm',
        ['--filter', '@adhoc-scheduler/loadtest', 'loadtest', '--help'],
        { cwd: REPO_ROOT, env: { ...process.env, PATH: path }, timeout: 60_000 },
        (error, out, err) => (error ? fail(error) : done({ stdout: out, stderr: err })),
      );
    });
    expect(stdout).toContain('Usage: pnpm --filter @adhoc-scheduler/loadtest loadtest');
    expect(`${stdout}${stderr}`).not.toContain('Unsupported engine');
  });
});
