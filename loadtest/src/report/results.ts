import { cpus, loadavg, totalmem } from 'node:os';
import type { ChaosReport } from '../chaos/evidence.js';
import type { CostEstimate } from '../cost/estimate.js';
import type { UsageSnapshot } from '../cost/usage-meter.js';
import type { CpuUse } from '../cpu.js';
import type { ServiceMode } from '../service/connection.js';
import type { StageBreakdown } from '../stages.js';
import type { DeliveryCounts, LatenessSummary } from '../tracker.js';

export type ScenarioName = 'steady' | 'hotspot' | 'far' | 'ingest' | 'backlog' | 'fairness' | 'chaos';

/** A target of the project's issues and whether the run met it. */
export interface TargetCheck {
  readonly name: string;
  readonly target: string;
  readonly actual: string;
  readonly met: boolean;
}

/** One tenant's share of a run that publishes for several. */
export interface TenantDelivery {
  readonly counts: DeliveryCounts;
  readonly latenessMs: LatenessSummary | undefined;
  readonly stagesMs: StageBreakdown | undefined;
}

export interface DeliverySummary {
  readonly counts: DeliveryCounts;
  readonly latenessMs: LatenessSummary | undefined;
  /** The same per tenant, when the run published for more than one. */
  readonly byTenant: Readonly<Record<string, TenantDelivery>> | undefined;
  /** Where lateness arose, ms (local service only). */
  readonly stagesMs: StageBreakdown | undefined;
  readonly publish: { readonly published: number; readonly failed: number; readonly requests: number; readonly seconds: number; readonly perSecond: number };
  readonly consumer: { readonly receives: number; readonly emptyReceives: number; readonly receiveErrors: number; readonly deleteErrors: number };
  /** Cores busy during the measurement, by process of the run and for everything else on the machine. */
  readonly cpu: CpuUse | undefined;
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
  readonly scenario: ScenarioName;
  readonly runId: string;
  readonly command: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly machine: MachineInfo;
  readonly source: { readonly commit: string; readonly uncommittedChanges: boolean } | undefined;
  readonly service: { readonly mode: ServiceMode; readonly settings: Readonly<Record<string, string | number | boolean | undefined>> };
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

/** Checks common to every delivery scenario: nothing early, missing or twice. */
export function correctnessTargets(counts: DeliveryCounts): TargetCheck[] {
  return [
    { name: 'missing', target: '0', actual: String(counts.missing), met: counts.missing === 0 },
    { name: 'duplicated', target: '0', actual: String(counts.duplicated), met: counts.duplicated === 0 },
    { name: 'early', target: '0', actual: String(counts.early), met: counts.early === 0 },
  ];
}

/** A lateness percentile against its bound. */
export function latenessTarget(lateness: LatenessSummary | undefined, key: keyof LatenessSummary, boundMs: number): TargetCheck {
  const actual = lateness?.[key];
  return {
    name: `lateness ${key}`,
    target: `≤ ${boundMs} ms`,
    actual: actual === undefined ? 'n/a' : `${actual} ms`,
    met: actual !== undefined && actual <= boundMs,
  };
}

export function costTarget(cost: CostEstimate | undefined, label: string, boundPerMillion: number): TargetCheck[] {
  if (!cost) return [];
  return [
    {
      name: `cost per million events, ${label}`,
      target: `≤ $${boundPerMillion.toFixed(2)}`,
      actual: `$${cost.perMillionEvents.toFixed(2)}`,
      met: cost.perMillionEvents <= boundPerMillion,
    },
  ];
}
