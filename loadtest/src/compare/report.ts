import type { MetricComparison } from './metrics.js';
import type { Side } from './order.js';

/** How a side's service stopped. */
export interface StopReport {
  readonly seconds: number;
  /** How `pnpm start` ended: its exit code, or the signal that ended it (SIGKILL: it did not stop in time). */
  readonly exit: string;
  /** Processes of the service (its emulators) still running once it had exited, killed then. */
  readonly leftOver: readonly string[];
}

/** The code one side ran. */
export interface SideVersion {
  /** As given (--base), or HEAD for the current checkout. */
  readonly ref: string;
  readonly commit: string;
  /** The commit's date, ISO 8601. */
  readonly commitDate: string;
  readonly uncommittedChanges: boolean;
  /** The tree its service was started from. */
  readonly tree: string;
}

export interface CompareRun {
  /** 1-based, in the order run. */
  readonly order: number;
  readonly side: Side;
  readonly startedAt: string;
  /** 1-minute load average just before its service started. */
  readonly loadAverageAtStart: number;
  readonly outDir: string;
  /** How its service stopped after SIGINT, and any process of it still running then (killed). */
  readonly stop: StopReport;
}

/** compare.json: what was compared, how, and the figures. */
export interface CompareReport {
  readonly command: string;
  readonly scenario: string;
  readonly mode: 'on disk' | 'in memory';
  readonly runsPerSide: number;
  /** Tenants registered on each run's service before the load (--registered-tenants), or why none were; absent when not asked for. */
  readonly registeredTenants?: number | string | undefined;
  readonly base: SideVersion;
  readonly head: SideVersion;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly runs: readonly CompareRun[];
  readonly metrics: readonly MetricComparison[];
}
