import { describe, expect, it } from 'vitest';
import { histogramSpec, renderSvg, svgToPng } from '../src/report/charts.js';

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
