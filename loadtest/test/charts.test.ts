import { describe, expect, it } from 'vitest';
import { histogramSpec, renderSvg, svgToPng, tallestBar } from '../src/report/charts.js';

const input = {
  title: 'test histogram',
  distribution: [
    [1, 40],
    [2, 120],
    [3, 30],
    [250, 1],
  ] as [number, number][],
  lateness: { count: 191, min: 1, mean: 3.2, p50: 2, p90: 3, p99: 3, 'p99.9': 250, max: 250 },
};

describe('lateness histograms', () => {
  it('render to an SVG that labels the percentiles, and to a PNG', async () => {
    for (const scale of ['linear', 'log'] as const) {
      const svg = await renderSvg(histogramSpec(input, scale));
      expect(svg).toContain('<svg');
      expect(svg).toContain('p99 3 ms');
      expect(svg).toContain('max 250 ms');
      const png = svgToPng(svg);
      expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
      expect(png.length).toBeGreaterThan(5_000);
    }
  });
});

describe('the log-scale histogram', () => {
  it('has a labelled tick above its tallest bar', async () => {
    // 2 and 3 ms share a 5-ms bar of 1,500 events: the axis must reach past 1,000, to 10,000.
    const distribution: [number, number][] = [
      [2, 1_200],
      [3, 300],
      [250, 1],
    ];
    expect(tallestBar(distribution)).toBe(1_500);
    const svg = await renderSvg(histogramSpec({ ...input, distribution, lateness: { ...input.lateness, count: 1_501 } }, 'log'));
    const labels = [...svg.matchAll(/<text[^>]*>([\d,.]+)<\/text>/g)].map((match) => Number((match[1] ?? '').replace(/,/g, '')));
    expect(Math.max(...labels)).toBeGreaterThanOrEqual(10_000);
  });

  it('bins as the plot does: events a bin apart add up to one bar', () => {
    // 0 to 250 ms is binned in steps of 5 ms: 1 and 4 ms share a bar, 6 ms is in the next.
    expect(
      tallestBar([
        [1, 10],
        [4, 10],
        [6, 15],
        [250, 1],
      ]),
    ).toBe(20);
    expect(tallestBar([[7, 3]])).toBe(3);
  });
});
