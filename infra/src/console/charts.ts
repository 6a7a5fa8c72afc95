import { html, type Html } from './html.js';

/** One bar: its name (its tooltip and the screen reader's), the tick under it, and its count. */
export interface Bar {
  readonly label: string;
  readonly tick: string;
  readonly count: number;
}

const WIDTH = 720;
const HEIGHT = 170;
/** Room above the bars for their counts, and below for their ticks. */
const TOP = 18;
const BOTTOM = 24;
const GAP = 6;

/**
 * A bar chart drawn on the server as inline SVG: markup, no script, and no inline style (the
 * page's policy allows none; the stylesheet colours it). Its title names it for a screen reader,
 * each bar's title gives its label and count, and the table beside it holds the same numbers.
 */
export function barChart(id: string, title: string, bars: readonly Bar[]): Html {
  const largest = Math.max(1, ...bars.map((bar) => bar.count));
  const slot = WIDTH / Math.max(1, bars.length);
  const plot = HEIGHT - TOP - BOTTOM;
  const count = (value: number) => value.toLocaleString('en-US');
  return html`<svg class="chart" id="${id}" role="img" aria-labelledby="${id}-title" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}">
<title id="${id}-title">${title}</title>
<line class="chart-axis" x1="0" y1="${TOP + plot}" x2="${WIDTH}" y2="${TOP + plot}"></line>
${bars.map((bar, index) => {
  // A bar with any events shows at least a sliver.
  const height = bar.count === 0 ? 0 : Math.max(2, Math.round((plot * bar.count) / largest));
  const x = Math.round(index * slot + GAP / 2);
  const middle = Math.round(index * slot + slot / 2);
  return html`<g class="chart-bar">
<rect x="${x}" y="${TOP + plot - height}" width="${Math.round(slot - GAP)}" height="${height}"><title>${bar.label}: ${count(bar.count)}</title></rect>
<text class="chart-count" x="${middle}" y="${TOP + plot - height - 4}" text-anchor="middle">${count(bar.count)}</text>
<text class="chart-tick" x="${middle}" y="${HEIGHT - 8}" text-anchor="middle">${bar.tick}</text>
</g>`;
})}
</svg>`;
}
