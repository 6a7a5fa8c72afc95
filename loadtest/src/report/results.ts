import { cpus, loadavg, totalmem } from 'node:os';
import type { ChaosReport } from '../chaos/evidence.js';
import type { CostEstimate } from '../cost/estimate.js';
import type { UsageSnapshot } from '../cost/usage-meter.js';
import type { CpuUse } from '../cpu.js';
import type { LoopDelay } from '../loop-delay.js';
import type { RegisteredTenants } from '../registered-tenants.js';
import type { ServiceMode } from '../service/connection.js';
import type { SourceVersion } from '../source.js';
import type { StageBreakdown } from '../stages.js';
import type { DeliveryCounts, LatenessSummary } from '../tracker.js';
import type { TargetCheck } from './targets.js';

/** One tenant's share of a run that publishes for several. */
export interface TenantDelivery {
  readonly counts: DeliveryCounts;
  readonly latenessMs: LatenessSummary | undefined;
  readonly stagesMs: StageBreakdown | undefined;
}

export interface DeliverySummary {
  readonly counts: DeliveryCounts;
  readonly latenessMs: LatenessSummary | undefined;
  /**
   * The emitter's own publish time (`scheduler-published-at`) minus the scheduled time, for the
   * same deliveries: the part of the lateness before the publish call; the rest is transport.
   */
  readonly publishLatenessMs: LatenessSummary | undefined;
  /** The same per tenant, when the run published for more than one. */
  readonly byTenant: Readonly<Record<string, TenantDelivery>> | undefined;
  /** Where lateness arose, ms (local service only). */
  readonly stagesMs: StageBreakdown | undefined;
  readonly publish: {
    readonly published: number;
    readonly failed: number;
    readonly requests: number;
    readonly seconds: number;
    readonly perSecond: number;
  };
  readonly consumer: {
    readonly receives: number;
    readonly emptyReceives: number;
    readonly receiveErrors: number;
    readonly deleteErrors: number;
  };
  /** Cores busy during the measurement, by process of the run and for everything else on the machine. */
  readonly cpu: CpuUse | undefined;
  /** How late the harness's own event loop ran, ms (see LoopDelay). */
  readonly harnessLoopDelayMs: LoopDelay;
  readonly missingSample: readonly string[];
}

/** What a scenario measured, before the CLI adds where and when. */
export interface ScenarioResult {
  readonly title: string;
  readonly parameters: Readonly<Record<string, string | number | boolean>>;
  /** Undefined for scenarios that deliver nothing (ingest). */
  readonly delivery: DeliverySummary | undefined;
  /** [lateness ms, events] of the main measurement, for the plots. */
  readonly distribution: readonly [number, number][];
  /** The same per tenant, when the run published for more than one (a plot each). */
  readonly distributionByTenant?: Readonly<Record<string, readonly [number, number][]>>;
  /** Scenario-specific numbers (ingest rates, far-path moves, loader ticks). */
  readonly details: Readonly<Record<string, unknown>>;
  readonly cost: CostEstimate | undefined;
  /** What the service's clients did during the measurement, as counted (the cost's quantities). */
  readonly usage: UsageSnapshot | undefined;
  readonly targets: readonly TargetCheck[];
  /** Kills, restarts, faults and every missing, early or failed event (chaos only). */
  readonly chaos?: ChaosReport;
}

export interface MachineInfo {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly node: string;
  readonly platform: string;
  /** 1-minute load average when the run started: anything above ~0.5 means other work shared the cores. */
  readonly loadAverageAtStart: number;
}

export interface RunResult extends Omit<ScenarioResult, 'distribution' | 'distributionByTenant'> {
  /** The scenario's name, as given on the command line. */
  readonly scenario: string;
  readonly runId: string;
  readonly command: string;
  readonly startedAt: string;
  /** When the scenario itself began: after the service started, and after the tenants of --registered-tenants were registered. */
  readonly loadStartedAt: string;
  readonly finishedAt: string;
  readonly machine: MachineInfo;
  readonly source: SourceVersion | undefined;
  readonly service: { readonly mode: ServiceMode; readonly settings: Readonly<Record<string, string | number | boolean | undefined>> };
  /** Tenants registered on the service before the load (--registered-tenants), and how long that took; absent when none were. */
  readonly registeredTenants?: RegisteredTenants;
  readonly files: Readonly<Record<string, string>>;
}

export function machineInfo(): MachineInfo {
  const cores = cpus();
  return {
    cpus: cores.length,
    cpuModel: cores[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    loadAverageAtStart: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}

export function round(value: number, digits = 1): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
