import type { TenantsDocument } from '@adhoc-scheduler/shared';
import type { ServiceFaults } from '../chaos/faults.js';
import type { ScenarioResult } from '../report/results.js';
import type { ScenarioTargets } from '../report/targets.js';
import type { RunContext } from './context.js';
import type { ScenarioParams } from './params.js';

/** Quotas far above what a run sends, for every tenant of a local service the harness starts: it measures delivery, not the quotas. */
export const LOAD_TEST_QUOTAS = { maxOpenEvents: 10_000_000, maxIngestPerSecond: 1_000_000, maxControlPerSecond: 1_000_000 } as const;

/** What a scenario needs of the local service it starts. */
export interface ScenarioService {
  /**
   * It sets the service up itself (registers tenants in it, writes into its table, reads its
   * loader, kills it), so it runs only on a local service the harness starts.
   */
  readonly startedForIt: boolean;
  /** Settings besides the near-path window and the loader interval (which come from the params), by environment variable. */
  readonly settings?: (params: ScenarioParams) => Readonly<Record<string, string>>;
  /**
   * Tenants registered besides the public one, in a service the harness starts and in those
   * loadtest compare starts; a service started elsewhere must have them (it never runs on AWS).
   */
  readonly tenants?: NonNullable<TenantsDocument['tenants']>;
  /**
   * Present when it kills the service with kill -9 and starts it again, with faults in a share
   * of its calls: the service then runs in a child process, its state on disk. Gives a run's faults.
   */
  readonly crashes?: (params: ScenarioParams, runId: string) => Pick<ServiceFaults, 'probability' | 'seed' | 'idPattern'>;
}

/** One scenario of the load test, described once: the command line, the run and the report take it from here. */
export interface Scenario {
  /** For --help: what it does, its defaults in brackets at the end. */
  readonly description: string;
  readonly run: (ctx: RunContext, params: ScenarioParams) => Promise<ScenarioResult>;
  /** Its knobs when the command line leaves them out (the seed is drawn at random). */
  readonly defaults: Omit<ScenarioParams, 'seed'>;
  /**
   * How long after the last due time missing events are awaited (--drain-seconds): long where
   * the emulators fall behind, and where a message held by a killed service waits out its
   * visibility timeout.
   */
  readonly drainSeconds: number;
  readonly service: ScenarioService;
  readonly targets: ScenarioTargets;
}
