import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { LOCAL_ACCOUNT } from '@adhoc-scheduler/infra';
import { DEFAULTS, ENV } from '@adhoc-scheduler/shared';
import { LoadTestUsageError } from './options.js';
import { adminOrFail, fileFlags, firstEventDelivered, registerTenants, type RegisteredTenants } from './registered-tenants.js';
import { machineInfo, round, type MachineInfo } from './report/results.js';
import { LOADTEST_DIR, REPO_ROOT, timeStamp } from './run.js';
import { LOAD_TEST_QUOTAS } from './scenarios/scenario.js';
import { startChildService } from './service/child.js';
import { harnessClients, type ServiceFiles } from './service/connection.js';
import { sourceVersion, type SourceVersion } from './source.js';

export const TENANT_ADD_USAGE = `Usage: loadtest tenant-add [--registered N] [--adds K] [--data-dir DIR] [--out DIR]

One more tenant on a local service with N registered. Starts the local service in a child
process, as a scenario does (on disk with --data-dir), registers N tenants by tenant import and
waits until the service takes the last one's first event. Then 2K tenants are added, one at a
time, each way in turn: tenant add through the CLI's own code path in this process (the
registry read and checked, the input topic created, the tenants file, the registry's table and
the outputs written),
and through scripts/admin, a process of its own as an operator types it (Node and the CLI's
modules loaded first). Each new tenant's first event is published to its new topic at once,
due at once. For each: how long the add took, when ingest accepted the event (its record's
creation time, from event show) and when it was delivered; and, for comparison, the same for a
lone event of a tenant the service knew already. Last, tenant list's first view, through the
CLI's code path in this process, three times each: the first page, a page by id prefix
(tenant-9) and a page by account (the first tenant added's).

The add writes the registry's table itself; the functions read it through a cache at most
${DEFAULTS.registryMaxAgeMs / 1000} s old (SCHEDULER_REGISTRY_MAX_AGE_MS), its staleness bound. Writes results.json and the
service's log.

  --registered N   tenants registered first                            [10,000] 0 to 100,000
  --adds K         tenants added each way, one at a time              [3] 1 to 20
  --data-dir DIR   the service keeps its state on disk there           [in memory]
  --out DIR        where results.json and service.log go
                   [loadtest/results/tenant-add-<time>]`;

export interface TenantAddOptions {
  readonly registered: number;
  readonly adds: number;
  readonly dataDir: string | undefined;
  readonly outDir: string | undefined;
}

/** One tenant added, and its first event. */
export interface TenantAdded {
  readonly tenant: string;
  /** The CLI's code path in this process, or scripts/admin in a process of its own. */
  readonly how: 'in process' | 'scripts/admin';
  readonly addMs: number;
  /** From the add's return to the creation of the first event's record by ingest. */
  readonly acceptedAfterAddMs: number;
  /** From the first event's publish (answered) to its record's creation. */
  readonly acceptedAfterPublishMs: number;
  /** From the add's return to the first event's delivery. */
  readonly deliveredAfterAddMs: number;
}

export interface TenantAddResult {
  readonly command: string;
  readonly startedAt: string;
  readonly machine: MachineInfo;
  readonly source: SourceVersion | undefined;
  readonly stateOnDisk: boolean;
  readonly stalenessBoundMs: number;
  readonly registered: RegisteredTenants | { readonly count: 0 };
  readonly adds: readonly TenantAdded[];
  /**
   * An event of a tenant the service knows already, alone on the input topic, for comparison:
   * ingest's batching window (a second, as on Lambda) holds a lone message that long.
   */
  readonly knownTenantEvent: { readonly acceptedAfterPublishMs: number; readonly deliveredAfterPublishMs: number };
  /** tenant list's first view with all of them registered, in ms, three runs each. */
  readonly listing: {
    readonly firstPageMs: readonly number[];
    readonly prefixPageMs: readonly number[];
    readonly accountPageMs: readonly number[];
  };
  readonly outDir: string;
}

/** Times tenant list's first view, each way three times, as an operator's command runs it (its code path in this process). */
async function timeListing(files: ServiceFiles, account: string): Promise<TenantAddResult['listing']> {
  const timed = async (filter: readonly string[]): Promise<number[]> => {
    const times: number[] = [];
    for (let run = 0; run < 3; run++) {
      const began = performance.now();
      const { stdout } = await adminOrFail(['tenant', 'list', ...filter, '--json', ...fileFlags(files)]);
      times.push(round(performance.now() - began, 1));
      if ((JSON.parse(stdout) as { tenants: unknown[] }).tenants.length === 0)
        throw new Error(`tenant list ${filter.join(' ')} listed no tenant`);
    }
    return times;
  };
  return {
    firstPageMs: await timed([]),
    prefixPageMs: await timed(['--prefix', 'tenant-9']),
    accountPageMs: await timed(['--account', account]),
  };
}

export function parseTenantAddCli(args: readonly string[]): TenantAddOptions | undefined {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      registered: { type: 'string', default: '10000' },
      adds: { type: 'string', default: '3' },
      'data-dir': { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return undefined;
  if (positionals.length > 0) throw new LoadTestUsageError(`unexpected arguments: ${positionals.join(' ')}`);
  const count = (name: 'registered' | 'adds', min: number, max: number): number => {
    const value = Number(values[name]);
    if (!Number.isInteger(value) || value < min || value > max)
      throw new LoadTestUsageError(`--${name} must be an integer from ${min} to ${max}, got "${values[name]}"`);
    return value;
  };
  return { registered: count('registered', 0, 100_000), adds: count('adds', 1, 20), dataDir: values['data-dir'], outDir: values.out };
}

/** The account of the k-th tenant added: none of the registered ones' (registryDocument numbers them from 100000000000). */
const newcomerAccount = (k: number): string => String(999_999_999_000 + k);

/** When ingest created the record of a tenant's event (event show, by the client's id), epoch ms. */
async function acceptedAt(files: ServiceFiles, tenant: string, clientId: string): Promise<number> {
  const { stdout } = await adminOrFail(['event', 'show', '--tenant', tenant, '--id', clientId, '--json', ...fileFlags(files)]);
  const { createdAt } = JSON.parse(stdout) as { createdAt?: string };
  if (createdAt === undefined) throw new Error(`event show gave no creation time for ${tenant}'s ${clientId}`);
  return Date.parse(createdAt);
}

/** A tenant's input topic, from the outputs tenant add wrote. */
async function inputTopicOf(files: ServiceFiles, tenant: string): Promise<string> {
  const outputs = JSON.parse(await readFile(files.outputs, 'utf8')) as { tenantInputTopicArns?: Record<string, string> };
  const arn = outputs.tenantInputTopicArns?.[tenant];
  if (arn === undefined) throw new Error(`${files.outputs} names no input topic of ${tenant}`);
  return arn;
}

/** scripts/admin in a process of its own, as an operator runs it; its stdout. */
function adminProcess(argv: readonly string[]): Promise<string> {
  return new Promise((done, fail) => {
    execFile(join(REPO_ROOT, 'scripts', 'admin'), argv, { cwd: REPO_ROOT, timeout: 120_000 }, (error, stdout, stderr) => {
      if (error) fail(new Error(`scripts/admin ${argv.slice(0, 2).join(' ')} failed: ${stderr || error.message}`));
      else done(stdout);
    });
  });
}

export async function runTenantAdd(options: TenantAddOptions, command: string): Promise<TenantAddResult> {
  const started = new Date();
  const machine = machineInfo();
  const outDir = resolve(options.outDir ?? join(LOADTEST_DIR, 'results', `tenant-add-${timeStamp(started)}`));
  await mkdir(outDir, { recursive: true });
  const files: ServiceFiles = { tenants: join(outDir, 'tenants.json'), outputs: join(outDir, 'outputs.json') };
  await writeFile(files.tenants, `${JSON.stringify({ public: LOAD_TEST_QUOTAS }, null, 2)}\n`);
  const logFile = join(outDir, 'service.log');
  const service = await startChildService({
    env: { [ENV.logLevel]: 'info' },
    emitterConcurrency: undefined,
    dataDir: options.dataDir,
    tenants: { file: files.tenants },
    logFile,
  });
  const clients = harnessClients(service.access);
  const probe = { clients, emitterRoleArn: service.emitterRoleArn };
  const user = `loadtest-${timeStamp(started)}`;
  try {
    await writeFile(files.outputs, `${JSON.stringify(service.local?.outputs, null, 2)}\n`);
    const registered =
      options.registered > 0 ? await registerTenants(files, probe, options.registered, outDir, user) : { count: 0 as const };
    const adds: TenantAdded[] = [];
    // Each way in turn: the CLI's code path in this process, then scripts/admin as typed.
    for (let k = 0; k < options.adds * 2; k++) {
      const how = k % 2 === 0 ? 'in process' : 'scripts/admin';
      const tenant = `newcomer-${k}`;
      const argv = ['tenant', 'add', tenant, '--account', newcomerAccount(k), '--target-account', LOCAL_ACCOUNT, ...fileFlags(files)];
      const began = performance.now();
      const stdout = how === 'in process' ? (await adminOrFail(argv)).stdout : await adminProcess(argv);
      const addMs = performance.now() - began;
      const addedAt = Date.now();
      // A user publishes right away, to the topic the add printed.
      const first = await firstEventDelivered(probe, { id: tenant, inputTopicArn: stdout.trim() }, user);
      const accepted = await acceptedAt(files, tenant, first.clientId);
      adds.push({
        tenant,
        how,
        addMs: round(addMs, 1),
        acceptedAfterAddMs: accepted - addedAt,
        acceptedAfterPublishMs: accepted - first.publishedAt,
        deliveredAfterAddMs: first.deliveredAt - addedAt,
      });
    }
    const known = adds[0]?.tenant;
    if (known === undefined) throw new Error('no tenant was added');
    const again = await firstEventDelivered(probe, { id: known, inputTopicArn: await inputTopicOf(files, known) }, user);
    const knownAccepted = await acceptedAt(files, known, again.clientId);
    const listing = await timeListing(files, newcomerAccount(0));
    const result: TenantAddResult = {
      command,
      startedAt: started.toISOString(),
      machine,
      source: sourceVersion(REPO_ROOT),
      stateOnDisk: options.dataDir !== undefined,
      stalenessBoundMs: DEFAULTS.registryMaxAgeMs,
      registered,
      adds,
      knownTenantEvent: {
        acceptedAfterPublishMs: knownAccepted - again.publishedAt,
        deliveredAfterPublishMs: again.deliveredAt - again.publishedAt,
      },
      listing,
      outDir,
    };
    await writeFile(join(outDir, 'results.json'), `${JSON.stringify(result, null, 2)}\n`);
    return result;
  } finally {
    clients.destroy();
    await service.stop();
  }
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

export function tenantAddSummary(result: TenantAddResult): string {
  const n = (value: number) => value.toLocaleString('en-US');
  const { registered } = result;
  const lines = [
    `tenant add with ${n(registered.count)} registered, ${result.stateOnDisk ? 'on disk' : 'in memory'} (load average at start ${result.machine.loadAverageAtStart})`,
  ];
  if ('importSeconds' in registered)
    lines.push(
      `  tenant import of ${n(registered.count)}: ${registered.importSeconds.toFixed(1)} s; the last one's first event delivered ${registered.inForceSeconds.toFixed(1)} s after it`,
    );
  for (const add of result.adds) {
    lines.push(
      `  ${add.tenant} (${add.how}): add ${n(Math.round(add.addMs))} ms; ` +
        `its first event accepted ${n(add.acceptedAfterAddMs)} ms after the add (${n(add.acceptedAfterPublishMs)} ms after its publish), delivered ${n(add.deliveredAfterAddMs)} ms after the add`,
    );
  }
  for (const how of ['in process', 'scripts/admin'] as const) {
    const times = result.adds.filter((add) => add.how === how).map((add) => add.addMs);
    if (times.length > 0)
      lines.push(
        `  tenant add ${how}: median ${n(Math.round(median(times)))} ms (${n(Math.round(Math.min(...times)))} to ${n(Math.round(Math.max(...times)))})`,
      );
  }
  const known = result.knownTenantEvent;
  lines.push(
    `  for comparison, a lone event of a tenant already known: accepted ${n(known.acceptedAfterPublishMs)} ms after its publish (ingest's batching window is 1 s), delivered ${n(known.deliveredAfterPublishMs)} ms after it`,
  );
  lines.push(`  staleness bound: the functions read the registry's table through a cache at most ${result.stalenessBoundMs / 1000} s old`);
  const { firstPageMs, prefixPageMs, accountPageMs } = result.listing;
  lines.push(
    `  tenant list's first view (ms, three runs each): first page ${firstPageMs.join(', ')}; by prefix ${prefixPageMs.join(', ')}; by account ${accountPageMs.join(', ')}`,
  );
  lines.push(`  written to ${result.outDir}`);
  return lines.join('\n');
}
