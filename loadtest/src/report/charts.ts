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

/** Marks drawn over the bars, so the percentiles read off the plot. */
function markers(lateness: LatenessSummary): { label: string; ms: number; top: number }[] {
  return [
    { label: `p50 ${lateness.p50} ms`, ms: lateness.p50 },
    { label: `p99 ${lateness.p99} ms`, ms: lateness.p99 },
    { label: `max ${lateness.max} ms`, ms: lateness.max },
  ].map((marker, index) => ({ ...marker, top: 12 + 14 * index }));
}

/** Vega-Lite spec of the lateness histogram; `log` puts the event counts on a log scale so the tail shows. */
export function histogramSpec(input: HistogramInput, scale: AxisScale): TopLevelSpec {
  const values = input.distribution.map(([latenessMs, events]) => ({ latenessMs, events }));
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
          x: { field: 'latenessMs', type: 'quantitative', bin: { maxbins: 80 }, title: 'lateness at the consumer (ms)' },
          y: {
            aggregate: 'sum',
            field: 'events',
            type: 'quantitative',
            title: 'events',
            scale: scale === 'log' ? { type: 'log', domainMin: 0.8 } : { type: 'linear' },
          },
        },
      },
      {
        data: { values: markers(input.lateness) },
        layer: [
          { mark: { type: 'rule', color: '#e45756', strokeDash: [4, 3] }, encoding: { x: { field: 'ms', type: 'quantitative' } } },
          // Labels right of their line, the last one left of it so that it stays inside the plot.
          ...(['left', 'right'] as const).map((align) => ({
            transform: [{ filter: align === 'left' ? 'datum.top < 40' : 'datum.top >= 40' }],
            mark: { type: 'text' as const, align, dx: align === 'left' ? 3 : -3, color: '#e45756', fontSize: 11 },
            encoding: {
              x: { field: 'ms', type: 'quantitative' as const },
              // Pixels from the top, one line per marker, so close markers do not overprint.
              y: { field: 'top', type: 'quantitative' as const, scale: null },
              text: { field: 'label' },
            },
          })),
        ],
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
