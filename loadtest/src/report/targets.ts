import type { CostEstimate } from '../cost/estimate.js';
import type { DeliveryCounts, LatenessSummary } from '../tracker.js';

/** A target and whether the run met it. */
export interface TargetCheck {
  readonly name: string;
  readonly target: string;
  readonly actual: string;
  readonly met: boolean;
}

const LATENESS_BOUNDS = ['p50', 'p99', 'max'] as const;

/**
 * What a scenario must meet, as numbers: its run checks each one (met or MISS in the summary),
 * and the table of targets in docs/contributing.md is made from them (targetsTable).
 */
export interface ScenarioTargets {
  /** No event missing or early, and none duplicated unless a crash may publish one again; `of` says whose, when not the run's. */
  readonly delivery?: { readonly duplicatesAllowed: boolean; readonly of?: string };
  /** Lateness at the consumer, ms, by percentile; `latenessOf` says whose, when not every measured event's. */
  readonly latenessMs?: Partial<Record<(typeof LATENESS_BOUNDS)[number], number>>;
  readonly latenessOf?: string;
  /** What the service's requests cost per million events at AWS list prices, $ (checked where usage is counted). */
  readonly costPerMillion?: number;
  /** DynamoDB write units per delivered event, quota counters included: writes are the scarce resource. */
  readonly writeUnitsPerEvent?: number;
  /** far: seconds in which one loader tick moves a minute of stored events into the delay queue. */
  readonly moveSeconds?: number;
  /** ingest: events the input side accepts per second. */
  readonly acceptedPerSecond?: number;
  /** chaos: every kill -9 and restart asked for is made. */
  readonly everyKill?: boolean;
  /** series: the latest of the occurrences of the series due at `:00.<offsetMs>`, ms after each is due. */
  readonly offsetSeries?: { readonly offsetMs: number; readonly maxLatenessMs: number };
  /** listing: a page's time at the 99th percentile, ms, and the read units it may consume per event it returns. */
  readonly listing?: { readonly pageMs: number; readonly readUnitsPerEvent: number };
  /** neighbour: every cancel `of` publishes at least `aheadSeconds` before its event is due is applied (the event never delivered). */
  readonly cancels?: { readonly aheadSeconds: number; readonly of: string };
  /** neighbour: each refused request of `of`'s answered by one failure notice, and at most `maxControlPerSecond` of its control requests taken in a second. */
  readonly refusals?: { readonly of: string; readonly maxControlPerSecond: number };
}

/** Checks common to every delivery scenario: nothing missing, twice (unless allowed) or early. */
export function correctnessTargets(counts: DeliveryCounts, duplicatesAllowed = false): TargetCheck[] {
  return [
    { name: 'missing', target: '0', actual: String(counts.missing), met: counts.missing === 0 },
    ...(duplicatesAllowed ? [] : [{ name: 'duplicated', target: '0', actual: String(counts.duplicated), met: counts.duplicated === 0 }]),
    { name: 'early', target: '0', actual: String(counts.early), met: counts.early === 0 },
    { name: 'published early', target: '0', actual: String(counts.earlyPublished), met: counts.earlyPublished === 0 },
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

/** Every lateness bound of the targets, p50 first. */
export function latenessTargets(lateness: LatenessSummary | undefined, bounds: ScenarioTargets['latenessMs'] = {}): TargetCheck[] {
  return LATENESS_BOUNDS.flatMap((key) => {
    const bound = bounds[key];
    return bound === undefined ? [] : [latenessTarget(lateness, key, bound)];
  });
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

const count = (value: number): string => value.toLocaleString('en-US');
const NONE = '–';

/** One row of the table: each target in its column. */
function targetCells(targets: ScenarioTargets): string[] {
  const { delivery, latenessMs, latenessOf, costPerMillion, writeUnitsPerEvent } = targets;
  const whose = (text: string, of: string | undefined): string => (of === undefined ? text : `${text}, ${of}`);
  const lateness = LATENESS_BOUNDS.flatMap((key) => {
    const bound = latenessMs?.[key];
    return bound === undefined ? [] : [`${key} ≤ ${count(bound)} ms`];
  }).join(', ');
  const other = [
    ...(targets.moveSeconds === undefined
      ? []
      : [`a minute of stored events moved into the delay queue by one loader tick in ≤ ${targets.moveSeconds} s`]),
    ...(targets.acceptedPerSecond === undefined ? [] : [`≥ ${count(targets.acceptedPerSecond)} events accepted per second`]),
    ...(targets.offsetSeries === undefined
      ? []
      : [
          `every occurrence of the series at \`:00.${targets.offsetSeries.offsetMs}\` delivered within ${targets.offsetSeries.maxLatenessMs} ms after it`,
        ]),
    ...(targets.cancels === undefined
      ? []
      : [`every cancel ${targets.cancels.of} publishes ≥ ${targets.cancels.aheadSeconds} s ahead applied (its event not delivered)`]),
    ...(targets.refusals === undefined
      ? []
      : [
          `each request of ${targets.refusals.of} answered by one failure notice, none twice; ≤ ${count(targets.refusals.maxControlPerSecond)} of its control requests taken in any second`,
        ]),
    ...(targets.everyKill ? ['every kill -9 and restart asked for (`--kills`) made'] : []),
    ...(targets.listing === undefined
      ? []
      : [
          `a page of 100 open events in ≤ ${targets.listing.pageMs} ms (p99), reading ≤ ${targets.listing.readUnitsPerEvent} read units per event it returns`,
        ]),
  ];
  return [
    delivery === undefined ? NONE : whose(`0 / ${delivery.duplicatesAllowed ? 'any' : '0'} / 0`, delivery.of),
    lateness === '' ? NONE : whose(lateness, latenessOf),
    costPerMillion === undefined ? NONE : `≤ $${costPerMillion.toFixed(2)}`,
    writeUnitsPerEvent === undefined ? NONE : `≤ ${writeUnitsPerEvent}`,
    other.length === 0 ? NONE : other.join('; '),
  ];
}

/** The targets of every scenario as a Markdown table, as docs/contributing.md shows them. */
export function targetsTable(scenarios: Readonly<Record<string, { readonly targets: ScenarioTargets }>>): string {
  return [
    '| scenario | missing / duplicated / early | lateness at the consumer | cost per million events | DynamoDB write units per event | other |',
    '|---|---|---|---|---|---|',
    ...Object.entries(scenarios).map(([name, { targets }]) => `| \`${name}\` | ${targetCells(targets).join(' | ')} |`),
  ].join('\n');
}
