import type { RunResult } from '../report/results.js';

/** One figure a comparison reads from every run's results. */
export interface MetricDefinition {
  readonly key: string;
  readonly label: string;
  /** Which way is an improvement; undefined for a figure of the probe itself (its publish rate). */
  readonly better: 'lower' | 'higher' | undefined;
  readonly read: (result: RunResult) => number | undefined;
}

const numberOrUndefined = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

/** A number among a scenario's details, one object down (neighbour's `quiet` and `noisy`). */
const detailOf = (result: RunResult, group: string, key: string): number | undefined =>
  numberOrUndefined((result.details[group] as Readonly<Record<string, unknown>> | undefined)?.[key]);

/** The figures compared, those of delivery scenarios, of ingest and of neighbour; a comparison keeps those its runs have. */
export function metricDefinitions(lateMs: number): readonly MetricDefinition[] {
  return [
    { key: 'latenessP50Ms', label: 'lateness p50 (ms)', better: 'lower', read: (r) => r.delivery?.latenessMs?.p50 },
    { key: 'latenessP99Ms', label: 'lateness p99 (ms)', better: 'lower', read: (r) => r.delivery?.latenessMs?.p99 },
    { key: 'latenessMaxMs', label: 'lateness max (ms)', better: 'lower', read: (r) => r.delivery?.latenessMs?.max },
    // The emitter's clock at its publish call: what of the lateness is the service's, before SNS's delivery.
    { key: 'publishLatenessP99Ms', label: 'publish lateness p99 (ms)', better: 'lower', read: (r) => r.delivery?.publishLatenessMs?.p99 },
    { key: 'publishLatenessMaxMs', label: 'publish lateness max (ms)', better: 'lower', read: (r) => r.delivery?.publishLatenessMs?.max },
    { key: 'late', label: `events > ${lateMs} ms late`, better: 'lower', read: (r) => r.delivery?.counts.late },
    { key: 'missing', label: 'missing', better: 'lower', read: (r) => r.delivery?.counts.missing },
    { key: 'duplicated', label: 'duplicated', better: 'lower', read: (r) => r.delivery?.counts.duplicated },
    { key: 'early', label: 'early', better: 'lower', read: (r) => r.delivery?.counts.early },
    {
      key: 'probePublishedPerSecond',
      label: 'probe publish rate (events/s)',
      better: undefined,
      read: (r) => r.delivery?.publish.perSecond,
    },
    {
      key: 'acceptedPerSecond',
      label: 'ingest accepted (events/s)',
      better: 'higher',
      read: (r) => numberOrUndefined(r.details.ingestedPerSecond),
    },
    {
      key: 'acceptedPerSecondMiddle80',
      label: 'ingest accepted, middle 80% (events/s)',
      better: 'higher',
      read: (r) => numberOrUndefined(r.details.ingestedPerSecondMiddle80),
    },
    {
      key: 'cancelledEventsDelivered',
      label: 'quiet tenant: cancelled events delivered',
      better: 'lower',
      read: (r) => detailOf(r, 'quiet', 'cancelledEventsDelivered'),
    },
    {
      key: 'noisyTaken',
      label: 'noisy tenant: control requests taken',
      better: undefined,
      read: (r) => detailOf(r, 'noisy', 'taken'),
    },
    {
      key: 'noisyRefusedOverQuota',
      label: 'noisy tenant: refused over its quota',
      better: undefined,
      read: (r) => detailOf(r, 'noisy', 'refusedOverQuota'),
    },
    {
      key: 'noisyLastNoticeSeconds',
      label: 'noisy tenant: last notice after start (s)',
      better: 'lower',
      read: (r) => detailOf(r, 'noisy', 'lastNoticeSecondsAfterStart'),
    },
    {
      key: 'publishedPerSecond',
      label: 'probe publish rate (events/s)',
      better: undefined,
      read: (r) => numberOrUndefined(r.details.publishedPerSecond),
    },
  ];
}

/** One side's runs of a figure; min, median and max of those it has (undefined: none). */
export interface SideFigures {
  readonly runs: readonly (number | undefined)[];
  readonly median: number | undefined;
  readonly min: number | undefined;
  readonly max: number | undefined;
}

export interface MetricComparison {
  readonly key: string;
  readonly label: string;
  readonly better: 'lower' | 'higher' | undefined;
  readonly base: SideFigures;
  readonly head: SideFigures;
  /** Head's median over base's; 1 when both are 0, undefined when base's is 0 alone or either is missing. */
  readonly ratio: number | undefined;
}

export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

export function sideFigures(runs: readonly (number | undefined)[]): SideFigures {
  const values = runs.filter((value): value is number => value !== undefined);
  return {
    runs,
    median: median(values),
    min: values.length === 0 ? undefined : Math.min(...values),
    max: values.length === 0 ? undefined : Math.max(...values),
  };
}

export function ratio(head: number | undefined, base: number | undefined): number | undefined {
  if (head === undefined || base === undefined) return undefined;
  if (base === 0) return head === 0 ? 1 : undefined;
  return head / base;
}

/** Every figure either side's runs have, base against head. */
export function compareRuns(
  definitions: readonly MetricDefinition[],
  base: readonly RunResult[],
  head: readonly RunResult[],
): MetricComparison[] {
  return definitions.flatMap((definition) => {
    const baseFigures = sideFigures(base.map(definition.read));
    const headFigures = sideFigures(head.map(definition.read));
    if (baseFigures.median === undefined && headFigures.median === undefined) return [];
    const { key, label, better } = definition;
    return [{ key, label, better, base: baseFigures, head: headFigures, ratio: ratio(headFigures.median, baseFigures.median) }];
  });
}
