import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from './kit.js';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');
const TSX = import.meta.resolve('tsx');
/** Where the README's outputs show the checkout. */
const README_CHECKOUT = '/home/me/adhoc-scheduler';

interface Step {
  readonly command: string;
  /** The output the README shows for it. */
  readonly shows: string;
}

/** The README's first event: each command (a `sh` block) with the output shown after it (a `text` block). */
async function firstEventSteps(): Promise<Step[]> {
  const readme = await readFile(join(REPO_ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Your first event\n');
  if (start < 0) throw new Error('README.md has no "Your first event" section');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  const blocks = [...section.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map(([, kind = '', body = '']) => ({ kind, body }));
  return blocks.flatMap(({ kind, body }, index) =>
    kind === 'sh' ? [{ command: body.trim(), shows: blocks[index + 1]?.kind === 'text' ? (blocks[index + 1]?.body ?? '') : '' }] : [],
  );
}

/** The file a package script runs with tsx (`pnpm start`, `pnpm example:publish`). */
async function scriptFile(name: string): Promise<string> {
  const { scripts } = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const file = /^tsx (\S+)$/.exec(scripts[name] ?? '')?.[1];
  if (file === undefined) throw new Error(`package.json's ${name} script does not run one file with tsx: ${scripts[name]}`);
  return join(REPO_ROOT, file);
}

/** What changes from one run to the next, masked: times, ids, ports and where the checkout is. */
function masked(text: string, checkout: string): string[] {
  return text
    .trim()
    .split('\n')
    .map((line) =>
      line
        .replaceAll(checkout, '<checkout>')
        .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<time>')
        .replace(/[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}/g, '<uuid>')
        .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>')
        .replace(/answered \d+ ms/g, 'answered <n> ms'),
    );
}

function run(file: string, args: readonly string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(file, args, { cwd, timeout: 60_000 }, (error, stdout, stderr) => {
      done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
  });
}

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe("the README's first event", () => {
  it('runs as the README shows: scripts/start, pnpm --silent example:publish, scripts/admin tail shows the delivery, then scripts/admin event show says emitted', async () => {
    const steps = await firstEventSteps();
    expect(steps.map(({ command }) => command)).toEqual([
      'scripts/start',
      'pnpm --silent example:publish',
      expect.stringMatching(/^scripts\/admin tail arn:\S+$/),
      expect.stringMatching(/^scripts\/admin event show m-\S+$/),
    ]);
    const [started, published, tailed, shown] = steps as [Step, Step, Step, Step];
    // A checkout of its own: the service's .local/ there, never the one a user keeps in this one.
    const checkout = await mkdtemp(join(tmpdir(), 'first-event-'));
    dirs.push(checkout);

    // scripts/start installs what is missing, then runs `pnpm start`: here on ports the system picks.
    const service = spawn(
      process.execPath,
      ['--import', TSX, await scriptFile('start'), '--port', '0', '--dynamodb-port', '0', '--console-port', '0'],
      {
        cwd: checkout,
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let banner = '';
    service.stderr.setEncoding('utf8').on('data', (text: string) => (banner += text));
    const exited = once(service, 'exit');
    try {
      await waitFor(
        () => {
          if (service.exitCode !== null) throw new Error(`scripts/start exited (${service.exitCode}): ${banner}`);
          return banner.includes('Stop with Ctrl-C.');
        },
        'the service ready',
        60_000,
      );
      expect(masked(banner, checkout)).toEqual(masked(started.shows, README_CHECKOUT));

      // Silent, pnpm prints nothing of its own: what the page shows is the script's output.
      const exampleFile = await scriptFile('example:publish');
      const publish = await run(process.execPath, ['--import', TSX, exampleFile], checkout);
      expect(publish).toMatchObject({ code: 0, stderr: '' });
      expect(masked(publish.stdout, checkout)).toEqual(masked(published.shows, README_CHECKOUT));
      const eventId = /event show (m-\S+)$/m.exec(publish.stdout)?.[1] ?? '';

      // scripts/admin reads the repository's .local/ unless told otherwise: here the checkout's.
      const files = ['--outputs', join(checkout, '.local/outputs.json'), '--tenants', join(checkout, '.local/tenants.json')];
      // The tail, started before the event is due, in a process group of its own as a terminal runs it.
      const tail = spawn(join(REPO_ROOT, 'scripts/admin'), [...tailed.command.split(' ').slice(1), '--outputs', files[1] ?? ''], {
        cwd: REPO_ROOT,
        detached: true,
      });
      let tailOutput = '';
      let tailNotes = '';
      tail.stdout.setEncoding('utf8').on('data', (text: string) => (tailOutput += text));
      tail.stderr.setEncoding('utf8').on('data', (text: string) => (tailNotes += text));
      const tailExited = once(tail, 'exit');
      try {
        await waitFor(() => tailOutput.includes('{"invoice":42}'), 'the delivery tailed', 40_000);
      } finally {
        process.kill(-(tail.pid ?? 0), 'SIGINT');
        await tailExited;
      }
      const [watching] = tailNotes.split('\n');
      expect(masked(`${watching}\n${tailOutput}`, checkout)).toEqual(masked(tailed.shows, README_CHECKOUT));
      expect(tailNotes).toMatch(/^Unsubscribed; queue adhoc-scheduler-tail-\S+ deleted\.$/m);

      const [, ...args] = shown.command.replace(/m-\S+$/, eventId).split(' ');
      const show = await waitFor(
        async () => {
          const result = await run(join(REPO_ROOT, 'scripts/admin'), [...args, ...files], REPO_ROOT);
          return /^state\s+(emitted|failed|cancelled)$/m.test(result.stdout) && result;
        },
        'the event ended',
        40_000,
      );
      expect(show).toMatchObject({ code: 0, stderr: '' });
      expect(masked(show.stdout, checkout)).toEqual(masked(shown.shows, README_CHECKOUT));
      const time = (label: string) => Date.parse(new RegExp(`^${label}\\s+(\\S+)`, 'm').exec(show.stdout)?.[1] ?? '');
      expect(time('emitted')).toBeGreaterThanOrEqual(time('due'));
    } finally {
      service.kill('SIGTERM');
      await exited;
    }
  }, 120_000);
});
