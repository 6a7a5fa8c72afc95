import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { LOCAL_ACCOUNT, LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import { admin, REPO_ROOT, type Run } from './admin-run.js';
import { FAST_TIMINGS, request, SchedulerClient, sharedEmulators, startTestScheduler, TopicConsumer, waitFor } from './kit.js';

/**
 * The operators' pages show `scripts/admin` commands with what they print (```console blocks:
 * `$ command`, then its output). Each is run here on a local service, in the page's order, and
 * what it prints is compared with the page by its shape: a table's columns, a field list's
 * labels, a line with its times, ids, numbers, topics and files masked. A page that drifts from
 * the commands fails here.
 */

const PAGES = ['docs/operators/admin.md', 'docs/operators/tenants.md'];

interface Shown {
  readonly page: string;
  /** The command as the page writes it, `NAME=$(...)` included. */
  readonly line: string;
  readonly output: readonly string[];
}

/** Every `$ ` line of the pages' console blocks that has output shown after it. */
async function shownCommands(): Promise<Shown[]> {
  const shown: Shown[] = [];
  for (const page of PAGES) {
    const markdown = await readFile(join(REPO_ROOT, page), 'utf8');
    for (const [, body = ''] of markdown.matchAll(/^```console\n([\s\S]*?)^```$/gm)) {
      let current: { line: string; output: string[] } | undefined;
      for (const text of body.split('\n')) {
        if (text.startsWith('$ ')) {
          if (current) shown.push({ page, ...current });
          current = { line: text.slice(2).trim(), output: [] };
        } else if (current && text.trim() !== '') current.output.push(text);
      }
      if (current) shown.push({ page, ...current });
    }
  }
  return shown.filter(({ output }) => output.length > 0);
}

/** What changes from one run to the next: page tokens, times, ids, numbers, topics and files. */
function masked(line: string): string {
  return line
    .replace(/--after \S+/g, '--after <token>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z/g, '<time>')
    .replace(/[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/\bc-[0-9a-f]{40}\b/g, '<id>')
    .replace(/arn:aws:sns:\S+?(?=[\s,]|$)/g, '<arn>')
    .replace(/\S*\/?(tenants|outputs)\.json/g, '<$1 file>')
    .replace(/\d[\d,]*/g, '<n>')
    .trimEnd();
}

const isHeader = (line: string) => /^[A-Z][A-Z/ -]*[A-Z/]$/.test(line) && / {2}/.test(line);
const cells = (line: string) => line.trim().split(/ {2,}/);
const label = (line: string) => /^(\S+(?: \S+)*?) {2,}/.exec(line)?.[1];

/** Checks what a command printed against what its page shows, by shape. */
function expectShape(shown: Shown, printed: string): void {
  const lines = printed.split('\n').filter((line) => line.trim() !== '');
  const [first = ''] = shown.output;
  const where = `${shown.page}: $ ${shown.line}`;
  if (isHeader(first)) {
    // A table: the same columns; every other line the page shows (a next page's token) has its like.
    expect(cells(lines[0] ?? ''), `${where}: the columns`).toEqual(cells(first));
    for (const line of shown.output.slice(1).filter((text) => cells(text).length !== cells(first).length))
      expect(lines.map(masked), `${where}: a line like "${line}"`).toContain(masked(line));
    return;
  }
  if (shown.output.every((line) => label(line) !== undefined) && shown.output.length > 3) {
    // A field list: the same labels, in the same order.
    expect(lines.map(label), `${where}: the fields`).toEqual(shown.output.map(label));
    return;
  }
  // Lines: the first and the last as the page shows them, and none of a shape the page does not show.
  const expected = shown.output.map(masked);
  const actual = lines.map(masked);
  expect(actual[0], `${where}: the first line`).toBe(expected[0]);
  expect(actual.at(-1), `${where}: the last line`).toBe(expected.at(-1));
  for (const line of actual) expect(expected, `${where}: a line the page shows the like of`).toContain(line);
}

const emulators = sharedEmulators();

describe('the commands the operators’ pages show', () => {
  it('print what the pages show, in shape, run in order on a local service', async () => {
    const commands = await shownCommands();
    expect(commands.length).toBeGreaterThan(5);
    const dir = await mkdtemp(join(tmpdir(), 'documented-'));
    const tenantsFile = join(dir, 'tenants.json');
    const outputsFile = join(dir, 'outputs.json');
    const scheduler = await startTestScheduler(emulators, { tenants: { file: tenantsFile }, env: FAST_TIMINGS });
    await writeFile(outputsFile, JSON.stringify(scheduler.outputs));
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'reminders');
    const clients: SchedulerClient[] = [];
    const where = ['--outputs', outputsFile, '--tenants', tenantsFile];
    const captured = new Map<string, Run>();
    let last: Run | undefined;
    let checked = 0;
    let setAside = false;
    try {
      for (const shown of commands) {
        const { line, output } = shown;
        const echo = /^echo \$(\w+|\?)$/.exec(line)?.[1];
        if (echo === '?') {
          expect(output, `${shown.page}: $ ${line}`).toEqual([String(last?.code)]);
          continue;
        }
        if (echo !== undefined) {
          expect(masked(captured.get(echo)?.stdout.trim() ?? ''), `${shown.page}: $ ${line}`).toBe(masked(output.join('\n')));
          continue;
        }
        // NAME=$(command): its stdout is kept for an echo; the page shows what it printed on stderr.
        const capture = /^(\w+)=\$\((.*)\)$/.exec(line);
        const command = capture?.[2] ?? line;
        expect(command, `${shown.page}: a command the test knows how to run`).toMatch(/^scripts\/admin /);
        const argv = command.replace(/^scripts\/admin /, '').split(' ');
        // It runs until Ctrl-C: tail.test.ts runs it, and first-event.test.ts compares its lines to the README's.
        if (argv[0] === 'tail') continue;
        if (argv[0] === 'dead-letters' && !setAside) setAside = await setAsideAnInput();
        // The dead-letter commands read no registry.
        const files = argv[0] === 'dead-letters' ? ['--outputs', outputsFile] : where;
        const run = await waitFor(async () => ready(argv, await admin(...argv, ...files)), `$ ${command}`, 30_000);
        await publishExamples(argv, run);
        if (capture?.[1] !== undefined) captured.set(capture[1], run);
        expectShape(shown, capture === null ? `${run.stdout}\n${run.stderr}` : run.stderr);
        last = run;
        checked += 1;
      }
      expect(checked).toBeGreaterThan(5);
    } finally {
      for (const client of clients) client.destroy();
      await target.stop();
      await scheduler.stop();
      await rm(dir, { recursive: true, force: true });
    }

    /** After the page's tenant is added: the events its later examples show. */
    async function publishExamples(argv: readonly string[], added: Run): Promise<void> {
      if (argv[0] !== 'tenant' || argv[1] !== 'add') return;
      // The page's tenant may target this account's topics (--target-account).
      expect(argv).toContain(LOCAL_ACCOUNT);
      const acme = new SchedulerClient(scheduler, added.stdout.trim());
      clients.push(acme);
      const later = Date.now() + 3_600_000;
      await acme.publish(request(target.topicArn, Date.now() + 2_000, '{"order":"order-41"}', { id: 'order-41', user: 'alice' }));
      for (const id of ['order-42', 'order-43'])
        await acme.publish(request(target.topicArn, later, id, { id, user: 'alice', labels: ['billing', 'eu-west'] }));
      for (const id of ['campaign-1', 'campaign-2'])
        await acme.publish(request(target.topicArn, later, id, { id, labels: ['campaign-7'] }));
      // Refused at ingest: a failure topic in an account the tenant may not use.
      const foreignFailures = `arn:aws:sns:${LOCAL_REGION}:222222222222:failures`;
      await acme.publish(request(target.topicArn, later, 'refused', { id: 'order-1', user: 'alice', failure_topic: foreignFailures }));
    }

    /** An input to the shared topic in the dead-letter queue, as SQS leaves one that failed every delivery. */
    async function setAsideAnInput(): Promise<boolean> {
      const sqs = new SQSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: scheduler.outputs.endpoint });
      const envelope = {
        Type: 'Notification',
        MessageId: randomUUID(),
        TopicArn: scheduler.outputs.inputTopicArn,
        Timestamp: new Date().toISOString(),
        Message: JSON.stringify(request(target.topicArn, Date.now() + 60_000, 'set aside')),
      };
      await sqs.send(new SendMessageCommand({ QueueUrl: scheduler.outputs.deadLetterQueueUrl, MessageBody: JSON.stringify(envelope) }));
      sqs.destroy();
      return true;
    }

    /** The run, once the events it reads are there as the page shows them (emitted, listed by label). */
    function ready(argv: readonly string[], run: Run): Run | undefined {
      const command = argv.join(' ');
      if (command.includes('--id order-41')) return /^state +emitted$/m.test(run.stdout) ? run : undefined;
      if (/--id order-1(?!\d)/.test(command)) return /refused at ingest/.test(run.stdout) ? run : undefined;
      if (command.startsWith('refusals')) return /order-1/.test(run.stdout) ? run : undefined;
      if (command.startsWith('dead-letters list')) return /public-ingest/.test(run.stdout) ? run : undefined;
      if (command.includes('--label billing')) return /next page/.test(run.stdout) ? run : undefined;
      return run;
    }
  }, 180_000);
});
