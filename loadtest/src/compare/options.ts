import { LoadTestUsageError, parseCli, integer, type CliOptions } from '../options.js';
import { SCENARIOS, type ScenarioName } from '../scenarios/catalog.js';

/** The scenarios that run against a service started elsewhere, as a comparison starts each side's. */
const COMPARABLE = (Object.keys(SCENARIOS) as ScenarioName[]).filter((name) => !SCENARIOS[name].service.startedForIt).join(', ');

/** What counts as late in a comparison unless --late-ms says otherwise: the steady figure to watch. */
export const COMPARE_LATE_MS = 50;

export const COMPARE_USAGE = `Compares a scenario's figures on two versions of the scheduler: the current checkout (head)
and a git ref (base). The base is checked out in .local/compare/<commit> (a git worktree,
reused by later comparisons), installed offline where the store allows, and given the head's
DynamoDB Local. Base and head then run alternately, base first in one pair and head first in
the next (base, head, head, base, ...), each on a service started fresh as users start it
(pnpm start in its own tree, on ports of its own, state in a new directory), measured by the
head's harness as --service external. Prints each figure's runs, medians, min-max and head/base
ratio, and writes compare.json beside every run's results.

Usage: pnpm --filter @adhoc-scheduler/loadtest loadtest compare --base REF <scenario> [options]

  --base REF       the commit, branch or tag to compare with (required)
  --runs N         runs on each side                              [3] 1 to 20
  --in-memory      the services keep their state in memory [on disk, as scripts/start does]
  --out DIR        where compare.json and the runs' results go
                   [loadtest/results/compare-<scenario>-<time>]
  --late-ms MS     what counts as late [${COMPARE_LATE_MS}]
  -h, --help       this text

Any other option is the scenario's (loadtest --help), given to every run alike. The scenario
must run against a service started elsewhere: ${COMPARABLE}. Options that choose
the service (--service, --outputs, --tenants, --data-dir, --emitter-concurrency, a deployed
stack's) are compare's to set, and --fail-on-miss has no place: a comparison reports, it does
not judge. --registered-tenants N registers N tenants on every run's service alike, by the
head's tenant import into that service's tenants file; when the base has no tenant import,
neither side gets them (the table says so).

Exit codes: 0 the comparison completed, 1 a run failed, 2 wrong command line.`;

export interface CompareOptions {
  /** The git ref to compare with, as given. */
  readonly base: string;
  readonly runsPerSide: number;
  readonly inMemory: boolean;
  readonly outDir: string | undefined;
  /** The scenario's options, as each run takes them (the service is set per run). */
  readonly cli: CliOptions;
}

/** Options of a single run that a comparison sets itself, or that make no sense in one. */
const REFUSED = [
  'service',
  'outputs',
  'tenants',
  'data-dir',
  'emitter-concurrency',
  'region',
  'input-topic-arn',
  'emitter-role-arn',
  'profile',
  'fail-on-miss',
];
const OWN_WITH_VALUE = ['base', 'runs', 'out'];

/** Parses `loadtest compare`'s arguments; undefined when help was asked for. Throws LoadTestUsageError on anything it cannot take. */
export function parseCompareCli(args: readonly string[]): CompareOptions | undefined {
  const own: Record<string, string> = {};
  let inMemory = false;
  const scenarioArgs: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] ?? '';
    if (arg === '-h' || arg === '--help') return undefined;
    const [name = '', inline] = arg.startsWith('--') ? arg.slice(2).split(/=(.*)/s) : [];
    if (name === 'in-memory') {
      inMemory = true;
    } else if (OWN_WITH_VALUE.includes(name)) {
      const value = inline ?? args[++index];
      if (value === undefined || value === '') throw new LoadTestUsageError(`--${name} needs a value`);
      own[name] = value;
    } else if (REFUSED.includes(name)) {
      throw new LoadTestUsageError(`--${name} is not for compare: it starts each side's service itself, and only reports`);
    } else {
      scenarioArgs.push(arg);
    }
  }
  if (own.base === undefined) throw new LoadTestUsageError('compare needs --base REF: the commit, branch or tag to compare with');
  const lateMs = scenarioArgs.some((arg) => arg === '--late-ms' || arg.startsWith('--late-ms='))
    ? []
    : ['--late-ms', String(COMPARE_LATE_MS)];
  const cli = parseCli([...scenarioArgs, ...lateMs]);
  if (!cli) return undefined;
  if (SCENARIOS[cli.scenario].service.startedForIt)
    throw new LoadTestUsageError(`the ${cli.scenario} scenario sets up the service it starts; compare runs ${COMPARABLE}`);
  return { base: own.base, runsPerSide: integer(own, 'runs', 3, 1, 20), inMemory, outDir: own.out, cli };
}
