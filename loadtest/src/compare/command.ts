import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { EXIT_CODE } from '../exit.js';
import type { RunResult } from '../report/results.js';
import { LOADTEST_DIR, REPO_ROOT, runScenario, serviceEnv, serviceTenants, timeStamp } from '../run.js';
import { SCENARIOS } from '../scenarios/catalog.js';
import { sourceVersion } from '../source.js';
import { compareRuns, metricDefinitions } from './metrics.js';
import type { CompareOptions } from './options.js';
import { runOrder, type Side } from './order.js';
import type { CompareReport, CompareRun, SideVersion } from './report.js';
import { registeredTenantsForBoth, startSideService } from './service.js';
import { commitDate, prepareBaseTree, resolveCommit } from './worktree.js';

/** The head: the checkout this harness runs from. */
const HEAD_ROOT = REPO_ROOT;

function headVersion(): SideVersion {
  const source = sourceVersion(HEAD_ROOT);
  if (!source) throw new Error(`${HEAD_ROOT} is not a git checkout: compare needs one`);
  return { ref: 'HEAD', ...source, commitDate: commitDate(HEAD_ROOT, source.commit), tree: HEAD_ROOT };
}

/**
 * Runs the scenario on the base and on the head alternately, each run on a service of its own
 * started fresh, and compares their figures. Writes compare.json; every run's results are in a
 * folder of their own beside it.
 */
export async function runCompare(options: CompareOptions, command: string): Promise<{ report: CompareReport; outDir: string }> {
  const startedAt = new Date();
  const { cli } = options;
  const note = (line: string): void => {
    process.stderr.write(`${line}\n`);
  };
  const head = headVersion();
  const baseCommit = resolveCommit(HEAD_ROOT, options.base);
  const baseTree = prepareBaseTree(HEAD_ROOT, baseCommit, note);
  const base: SideVersion = {
    ref: options.base,
    commit: baseCommit,
    commitDate: commitDate(HEAD_ROOT, baseCommit),
    uncommittedChanges: false,
    tree: baseTree,
  };
  const sides: Readonly<Record<Side, SideVersion>> = { base, head };
  const outDir = resolve(options.outDir ?? join(LOADTEST_DIR, 'results', `compare-${cli.scenario}-${timeStamp(startedAt)}`));
  await mkdir(outDir, { recursive: true });
  const scenario = SCENARIOS[cli.scenario];
  // Both sides alike or neither: a base without tenant import cannot be given the registered tenants.
  const { count: registeredTenants, leftOut } = registeredTenantsForBoth(cli.registeredTenants, baseTree);
  if (leftOut !== undefined) note(`--registered-tenants ${cli.registeredTenants}: ${leftOut} (${baseCommit.slice(0, 7)})`);

  const runs: CompareRun[] = [];
  const results: Record<Side, RunResult[]> = { base: [], head: [] };
  for (const [index, side] of runOrder(options.runsPerSide).entries()) {
    const order = index + 1;
    const version = sides[side];
    const runDir = join(outDir, `${order}-${side}`);
    await mkdir(runDir, { recursive: true });
    note(`run ${order} of ${options.runsPerSide * 2}: ${side} (${version.commit.slice(0, 7)})`);
    const workDir = await mkdtemp(join(tmpdir(), 'loadtest-compare-'));
    const loadAverageAtStart = Math.round((loadavg()[0] ?? 0) * 100) / 100;
    const runStartedAt = new Date().toISOString();
    const service = await startSideService({
      tree: version.tree,
      workDir,
      inMemory: options.inMemory,
      env: serviceEnv(scenario, cli.params),
      tenants: serviceTenants(scenario),
      logFile: join(runDir, 'service.log'),
    });
    // The service runs in process groups of its own, out of reach of a Ctrl-C meant for the comparison: stop it, then end.
    const interrupted = (): void => {
      void service.stop().finally(() => process.exit(EXIT_CODE.failed));
    };
    process.once('SIGINT', interrupted);
    let result: RunResult;
    try {
      ({ result } = await runScenario(
        {
          ...cli,
          registeredTenants,
          service: { kind: 'external', outputsFile: service.outputsFile, tenantsFile: service.tenantsFile },
          outDir: runDir,
        },
        `${command} (run ${order}, ${side})`,
        { commit: version.commit, uncommittedChanges: version.uncommittedChanges },
      ));
    } finally {
      process.off('SIGINT', interrupted);
      runs.push({
        order,
        side,
        startedAt: runStartedAt,
        loadAverageAtStart,
        outDir: runDir,
        stop: await service.stop(),
      });
      await rm(workDir, { recursive: true, force: true });
    }
    results[side].push(result);
  }

  const report: CompareReport = {
    command,
    scenario: cli.scenario,
    mode: options.inMemory ? 'in memory' : 'on disk',
    runsPerSide: options.runsPerSide,
    registeredTenants: registeredTenants ?? leftOut,
    base,
    head,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    runs,
    metrics: compareRuns(metricDefinitions(cli.measure.lateMs), results.base, results.head),
  };
  await writeFile(join(outDir, 'compare.json'), `${JSON.stringify(report, null, 2)}\n`);
  return { report, outDir };
}
