import { describe, expect, it } from 'vitest';
import { compareRuns, median, metricDefinitions, ratio, sideFigures } from '../src/compare/metrics.js';
import { COMPARE_LATE_MS, parseCompareCli } from '../src/compare/options.js';
import { runOrder } from '../src/compare/order.js';
import type { CompareReport } from '../src/compare/report.js';
import { columns, compareTable, figure } from '../src/compare/table.js';
import { LoadTestUsageError } from '../src/options.js';
import type { RunResult } from '../src/report/results.js';

describe('parseCompareCli', () => {
  it('takes its own options and gives the rest to the scenario, late meaning over 50 ms unless told', () => {
    const options = parseCompareCli(['--base', 'main', 'hotspot', '--events', '2000', '--runs=2', '--in-memory', '--out', 'x']);
    expect(options).toMatchObject({ base: 'main', runsPerSide: 2, inMemory: true, outDir: 'x' });
    expect(options?.cli.scenario).toBe('hotspot');
    expect(options?.cli.params.events).toBe(2000);
    expect(options?.cli.measure.lateMs).toBe(COMPARE_LATE_MS);
    expect(parseCompareCli(['steady', '--base=abc', '--late-ms', '20'])).toMatchObject({ base: 'abc', runsPerSide: 3, inMemory: false });
    expect(parseCompareCli(['steady', '--base=abc', '--late-ms', '20'])?.cli.measure.lateMs).toBe(20);
  });

  it('refuses a command without a base, a choice of service, or a scenario that sets up its own', () => {
    expect(() => parseCompareCli(['steady'])).toThrow(/--base/);
    expect(() => parseCompareCli(['steady', '--base'])).toThrow(/--base needs a value/);
    for (const option of ['--service', '--outputs', '--tenants', '--data-dir', '--region', '--fail-on-miss'])
      expect(() => parseCompareCli(['steady', '--base', 'b', option, 'v'])).toThrow(LoadTestUsageError);
    expect(() => parseCompareCli(['far', '--base', 'b'])).toThrow(/steady, hotspot, ingest/);
    expect(() => parseCompareCli(['steady', '--base', 'b', '--runs', '0'])).toThrow(/--runs/);
    expect(() => parseCompareCli(['steady', '--base', 'b', '--events', 'many'])).toThrow(/--events/);
  });

  it("takes the neighbour scenario, whose tenants go into each side's tenants file", () => {
    expect(parseCompareCli(['neighbour', '--base', 'b', '--events', '5000'])?.cli.params).toMatchObject({
      events: 5000,
      quietEvents: 1000,
    });
  });

  it('gives --registered-tenants to the runs, as any option of the scenario', () => {
    expect(parseCompareCli(['steady', '--base', 'b', '--registered-tenants', '10000'])?.cli.registeredTenants).toBe(10_000);
  });

  it('returns nothing when help is asked for', () => {
    expect(parseCompareCli(['--help'])).toBeUndefined();
    expect(parseCompareCli(['steady', '-h'])).toBeUndefined();
  });
});

describe('runOrder', () => {
  it('alternates which side goes first in each pair, ABBA', () => {
    expect(runOrder(1)).toEqual(['base', 'head']);
    expect(runOrder(3)).toEqual(['base', 'head', 'head', 'base', 'base', 'head']);
    expect(runOrder(4).filter((side) => side === 'base')).toHaveLength(4);
  });
});

describe('the figures compared', () => {
  it('have a median, a min and a max of the runs that gave them', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(median([])).toBeUndefined();
    expect(sideFigures([5, undefined, 1])).toEqual({ runs: [5, undefined, 1], median: 3, min: 1, max: 5 });
  });

  it('compare head with base as a ratio of medians, equal zeros as 1', () => {
    expect(ratio(50, 100)).toBe(0.5);
    expect(ratio(0, 0)).toBe(1);
    expect(ratio(3, 0)).toBeUndefined();
    expect(ratio(undefined, 1)).toBeUndefined();
  });

  it('are read from each run, keeping only those either side has', () => {
    const delivery = (p99: number): RunResult =>
      ({
        delivery: {
          latenessMs: { p50: 2, p99, max: p99 * 2 },
          counts: { late: 1, missing: 0, duplicated: 0, early: 0 },
          publish: { perSecond: 33 },
        },
        details: {},
      }) as unknown as RunResult;
    const metrics = compareRuns(metricDefinitions(50), [delivery(10), delivery(20)], [delivery(9)]);
    expect(metrics.map((metric) => metric.key)).toEqual([
      'latenessP50Ms',
      'latenessP99Ms',
      'latenessMaxMs',
      'late',
      'missing',
      'duplicated',
      'early',
      'probePublishedPerSecond',
    ]);
    expect(metrics[1]).toMatchObject({
      label: 'lateness p99 (ms)',
      base: { median: 15, min: 10, max: 20 },
      head: { median: 9 },
      ratio: 0.6,
    });
    expect(metrics[3]?.label).toBe('events > 50 ms late');

    const neighbour = (delivered: number): RunResult =>
      ({
        delivery: undefined,
        details: {
          quiet: { cancelledEventsDelivered: delivered },
          noisy: { taken: 30_000, refusedOverQuota: 15_000, lastNoticeSecondsAfterStart: 'n/a' },
        },
      }) as unknown as RunResult;
    expect(compareRuns(metricDefinitions(50), [neighbour(0)], [neighbour(2)]).map((metric) => [metric.key, metric.head.median])).toEqual([
      ['cancelledEventsDelivered', 2],
      ['noisyTaken', 30_000],
      ['noisyRefusedOverQuota', 15_000],
    ]);

    const ingest = (rate: number | string): RunResult =>
      ({ delivery: undefined, details: { ingestedPerSecond: rate, publishedPerSecond: 4000 } }) as unknown as RunResult;
    const ingestMetrics = compareRuns(metricDefinitions(50), [ingest(1000)], [ingest('n/a')]);
    expect(ingestMetrics.map((metric) => [metric.key, metric.ratio])).toEqual([
      ['acceptedPerSecond', undefined],
      ['publishedPerSecond', 1],
    ]);
  });
});

describe('the comparison table', () => {
  it('shows whole figures with separators and others to a decimal', () => {
    expect(figure(12345)).toBe('12,345');
    expect(figure(2.25)).toBe('2.3');
    expect(figure(undefined)).toBe('n/a');
    expect(
      columns([
        ['a', 'bbb'],
        ['cc', 'd'],
      ]),
    ).toEqual(['a   bbb', 'cc  d']);
  });

  it('names the versions, the runs and each figure with its spread and ratio', () => {
    const side = { commitDate: '2026-11-27T12:00:00+00:00', tree: '/t', uncommittedChanges: false };
    const report: CompareReport = {
      command: 'loadtest compare --base 7af2a6e hotspot',
      scenario: 'hotspot',
      mode: 'on disk',
      runsPerSide: 2,
      base: { ...side, ref: '7af2a6e', commit: '7af2a6e1bd47da90d0340328b910f2d044667feb' },
      head: { ...side, ref: 'HEAD', commit: '0d6de2a0000000000000000000000000000000000', uncommittedChanges: true },
      startedAt: '2026-11-27T20:00:00.000Z',
      finishedAt: '2026-11-27T20:10:00.000Z',
      runs: [
        {
          order: 1,
          side: 'base',
          startedAt: '2026-11-27T20:00:00.000Z',
          loadAverageAtStart: 0.5,
          outDir: '/r/1-base',
          stop: { seconds: 1.5, exit: 'exit code 0', leftOver: [] },
        },
        {
          order: 2,
          side: 'head',
          startedAt: '2026-11-27T20:05:00.000Z',
          loadAverageAtStart: 1.25,
          outDir: '/r/2-head',
          stop: { seconds: 60, exit: 'SIGKILL', leftOver: ['42 java'] },
        },
      ],
      metrics: [
        {
          key: 'latenessP99Ms',
          label: 'lateness p99 (ms)',
          better: 'lower',
          base: sideFigures([5200, 4800]),
          head: sideFigures([2600, 2400]),
          ratio: 0.5,
        },
      ],
    };
    expect(compareTable(report, '/r')).toBe(
      [
        'compare: hotspot, 2 runs a side, state on disk',
        '  command: loadtest compare --base 7af2a6e hotspot',
        '  base: 7af2a6e (7af2a6e, committed 2026-11-27T12:00:00+00:00)',
        '  head: 0d6de2a (HEAD, committed 2026-11-27T12:00:00+00:00) with uncommitted changes',
        '',
        '  run  side  started                   load average  service stopped                                    results',
        '  1    base  2026-11-27T20:00:00.000Z  0.5           exit code 0 after 1.5 s                            /r/1-base',
        '  2    head  2026-11-27T20:05:00.000Z  1.25          SIGKILL after 60 s; left running, killed: 42 java  /r/2-head',
        '',
        '  metric             base runs     head runs     base median  head median  head/base               base min–max  head min–max',
        '  lateness p99 (ms)  5,200, 4,800  2,600, 2,400  5,000        2,500        0.50 (lower is better)  4,800–5,200   2,400–2,600',
        '',
        '  written to /r',
      ].join('\n'),
    );
    // Tenants registered on every run's service before its load, or why they were not.
    expect(compareTable({ ...report, registeredTenants: 10_000 }, '/r').split('\n')[2]).toBe(
      "  registered tenants: 10,000 more on each run's service, by tenant import, before the load",
    );
    expect(
      compareTable({ ...report, registeredTenants: 'left out on both sides: the base has no tenant import' }, '/r').split('\n')[2],
    ).toBe('  registered tenants: left out on both sides: the base has no tenant import');
  });
});
