import type { MetricComparison, SideFigures } from './metrics.js';
import type { CompareReport, SideVersion } from './report.js';

/** A figure as the table shows it: whole numbers with separators, others to one decimal. */
export function figure(value: number | undefined): string {
  if (value === undefined) return 'n/a';
  return Number.isInteger(value) ? value.toLocaleString('en-US') : value.toFixed(1);
}

const runs = (side: SideFigures): string => side.runs.map(figure).join(', ');
const spread = (side: SideFigures): string => (side.min === undefined ? 'n/a' : `${figure(side.min)}–${figure(side.max)}`);

function ratioText(metric: MetricComparison): string {
  if (metric.ratio === undefined) return 'n/a';
  const direction = metric.better === undefined ? '' : ` (${metric.better} is better)`;
  return `${metric.ratio.toFixed(2)}${direction}`;
}

/** Rows as columns padded to their widest cell. */
export function columns(rows: readonly (readonly string[])[]): string[] {
  const widths = rows[0]?.map((_, index) => Math.max(...rows.map((row) => (row[index] ?? '').length))) ?? [];
  return rows.map((row) =>
    row
      .map((cell, index) => cell.padEnd(widths[index] ?? 0))
      .join('  ')
      .trimEnd(),
  );
}

const version = (side: SideVersion): string =>
  `${side.commit.slice(0, 7)} (${side.ref}, committed ${side.commitDate})${side.uncommittedChanges ? ' with uncommitted changes' : ''}`;

/** The comparison for the terminal: what ran, each run, then a row per figure. */
export function compareTable(report: CompareReport, outDir: string): string {
  const header = ['metric', 'base runs', 'head runs', 'base median', 'head median', 'head/base', 'base min–max', 'head min–max'];
  const rows = report.metrics.map((metric) => [
    metric.label,
    runs(metric.base),
    runs(metric.head),
    figure(metric.base.median),
    figure(metric.head.median),
    ratioText(metric),
    spread(metric.base),
    spread(metric.head),
  ]);
  const runLines = columns([
    ['run', 'side', 'started', 'load average', 'service stopped', 'results'],
    ...report.runs.map((run) => [
      String(run.order),
      run.side,
      run.startedAt,
      String(run.loadAverageAtStart),
      `${run.stop.exit} after ${run.stop.seconds} s${run.stop.leftOver.length > 0 ? `; left running, killed: ${run.stop.leftOver.join('; ')}` : ''}`,
      run.outDir,
    ]),
  ]);
  return [
    `compare: ${report.scenario}, ${report.runsPerSide} run${report.runsPerSide === 1 ? '' : 's'} a side, state ${report.mode}`,
    `  command: ${report.command}`,
    ...(report.registeredTenants === undefined
      ? []
      : [
          `  registered tenants: ${typeof report.registeredTenants === 'number' ? `${figure(report.registeredTenants)} more on each run's service, by tenant import, before the load` : report.registeredTenants}`,
        ]),
    `  base: ${version(report.base)}`,
    `  head: ${version(report.head)}`,
    '',
    ...runLines.map((line) => `  ${line}`),
    '',
    ...columns([header, ...rows]).map((line) => `  ${line}`),
    '',
    `  written to ${outDir}`,
  ].join('\n');
}
