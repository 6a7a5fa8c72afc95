import { Resvg } from '@resvg/resvg-js';
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { LatenessSummary } from '../tracker.js';

export type AxisScale = 'linear' | 'log';

export interface HistogramInput {
  readonly title: string;
  /** [lateness ms, events] pairs. */
  readonly distribution: readonly (readonly [number, number])[];
  readonly lateness: LatenessSummary;
}

/** Lines drawn over the bars, named in the legend, so the percentiles read off the plot. */
function markers(lateness: LatenessSummary): { label: string; ms: number }[] {
  return [
    { label: `p50 ${lateness.p50} ms`, ms: lateness.p50 },
    { label: `p99 ${lateness.p99} ms`, ms: lateness.p99 },
    { label: `max ${lateness.max} ms`, ms: lateness.max },
  ];
}

/** How the lateness axis is binned: lateness is whole milliseconds, so no bin is narrower than one. */
const BINS = { maxbins: 80, minstep: 1 } as const;

interface Bins {
  readonly start: number;
  readonly stop: number;
  readonly step: number;
}

/** Vega's binning, the one the plot's bars are drawn with: vega re-exports it from vega-statistics at runtime, and its typings leave it out. */
const { bin: vegaBins } = vega as unknown as {
  readonly bin: (options: { readonly extent: readonly [number, number]; readonly maxbins: number; readonly minstep: number }) => Bins;
};

/** Events in the tallest bar, binned as the plot bins them. */
export function tallestBar(distribution: HistogramInput['distribution']): number {
  const total = distribution.reduce((sum, [, events]) => sum + events, 0);
  const lateness = distribution.map(([ms]) => ms);
  const { start, stop, step } = vegaBins({ extent: [Math.min(...lateness), Math.max(...lateness)], ...BINS });
  if (!(step > 0) || !Number.isFinite(step)) return total;
  const last = Math.max(0, Math.ceil((stop - start) / step) - 1);
  const bars = new Map<number, number>();
  for (const [ms, events] of distribution) {
    const bar = Math.min(last, Math.floor((ms - start) / step));
    bars.set(bar, (bars.get(bar) ?? 0) + events);
  }
  return Math.max(0, ...bars.values());
}

/** The top of a log axis: the power of ten above the tallest bar, so a labelled tick is higher than every bar. */
function logAxisTop(distribution: HistogramInput['distribution']): number {
  return 10 ** (Math.floor(Math.log10(Math.max(1, tallestBar(distribution)))) + 1);
}

/** Vega-Lite spec of the lateness histogram; `log` puts the event counts on a log scale so the tail shows. */
export function histogramSpec(input: HistogramInput, scale: AxisScale): TopLevelSpec {
  const values = input.distribution.map(([latenessMs, events]) => ({ latenessMs, events }));
  const marks = markers(input.lateness);
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: input.title, subtitle: scale === 'log' ? 'event counts on a log scale' : 'event counts on a linear scale' },
    width: 640,
    height: 300,
    background: 'white',
    config: { font: 'DejaVu Sans' },
    layer: [
      {
        data: { values },
        mark: { type: 'bar', color: '#4c78a8' },
        encoding: {
          x: { field: 'latenessMs', type: 'quantitative', bin: BINS, title: 'lateness at the consumer (ms)', axis: { format: ',d' } },
          y: {
            aggregate: 'sum',
            field: 'events',
            type: 'quantitative',
            title: 'events',
            scale: scale === 'log' ? { type: 'log', domainMin: 0.8, domainMax: logAxisTop(input.distribution) } : { type: 'linear' },
          },
        },
      },
      {
        data: { values: marks },
        mark: { type: 'rule', strokeDash: [5, 3], strokeWidth: 2 },
        encoding: {
          x: { field: 'ms', type: 'quantitative' },
          color: {
            field: 'label',
            type: 'nominal',
            title: null,
            sort: marks.map((m) => m.label),
            scale: { domain: marks.map((m) => m.label), range: ['#54a24b', '#f58518', '#e45756'] },
            legend: { orient: 'top', direction: 'horizontal', labelFontSize: 12, symbolStrokeWidth: 3 },
          },
        },
      },
    ],
  };
}

export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

export function svgToPng(svg: string): Buffer {
  return new Resvg(svg, { font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' }, fitTo: { mode: 'zoom', value: 1.5 } })
    .render()
    .asPng();
}
