import { describe, expect, it } from 'vitest';
import { EVENT_STATE, LATENESS_BINS_MS, type EventRecord } from '@adhoc-scheduler/shared';
import { overviewFigures, TIMELINE_SLOT_MS } from '../../src/console/figures.js';
import { barChart } from '../../src/console/charts.js';
import { html } from '../../src/console/html.js';

const NOW = Date.parse('2026-11-25T09:00:00.000Z');

function record(fields: Partial<EventRecord>): EventRecord {
  return {
    id: 'c-1',
    tenant: 'acme',
    user: 'tests',
    target: 'arn:aws:sns:us-east-1:111111111111:target',
    dueAt: NOW,
    version: 1,
    state: EVENT_STATE.scheduled,
    payloadKept: 'record',
    createdAt: NOW - 60_000,
    expiresAt: NOW / 1000 + 86_400,
    ...fields,
  };
}

describe("the overview's figures", () => {
  it('count the next hour by five-minute slot, and take the last hour from the ends’ counts, each bin named', () => {
    const lateness = LATENESS_BINS_MS.map(() => 0).concat(0);
    lateness[0] = 1;
    lateness[2] = 1;
    lateness[LATENESS_BINS_MS.length] = 1;
    const figures = overviewFigures(
      NOW,
      [record({ dueAt: NOW }), record({ dueAt: NOW + TIMELINE_SLOT_MS - 1 }), record({ dueAt: NOW + 59 * 60_000 })],
      { emitted: 3, failed: 1, lateness },
    );
    expect(figures.dueNextHour.map((slot) => slot.count)).toEqual([2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    expect(figures.dueNextHour[1]?.from).toBe(NOW + TIMELINE_SLOT_MS);
    expect(figures).toMatchObject({ emittedLastHour: 3, failedLastHour: 1 });
    expect(figures.lateness).toHaveLength(LATENESS_BINS_MS.length + 1);
    expect(figures.lateness.filter((bin) => bin.count > 0)).toEqual([
      { label: '0 ms to 10 ms', count: 1 },
      { label: '50 ms to 100 ms', count: 1 },
      { label: '5 s or more', count: 1 },
    ]);
  });
});

describe('a bar chart', () => {
  it('is inline SVG with no script and no inline style, named for screen readers, each bar scaled to the largest and titled with its count', () => {
    const chart = barChart('late', 'Lateness <all>', [
      { label: '0 ms to 10 ms', tick: '<10', count: 40 },
      { label: '10 ms to 50 ms', tick: '10–50', count: 10 },
      { label: '5 s or more', tick: '5 s+', count: 0 },
    ]).text;
    expect(chart).toMatch(/^<svg class="chart" id="late" role="img" aria-labelledby="late-title"/);
    expect(chart).toContain('<title id="late-title">Lateness &lt;all&gt;</title>');
    expect(chart).not.toMatch(/<script|style=|on[a-z]+=/);
    const heights = [...chart.matchAll(/<rect [^>]*height="(\d+)"><title>([^<]*)<\/title>/g)].map(([, height, title]) => [
      Number(height),
      title,
    ]);
    expect(heights).toEqual([
      [128, '0 ms to 10 ms: 40'],
      [32, '10 ms to 50 ms: 10'],
      [0, '5 s or more: 0'],
    ]);
    expect(chart).toContain('>&lt;10</text>');
  });
});

describe('the pages', () => {
  it('escape every value they show', () => {
    expect(html`<td title="${'"><script>'}">${"<img src=x onerror='1'>&"}</td>`.text).toBe(
      '<td title="&quot;&gt;&lt;script&gt;">&lt;img src=x onerror=&#39;1&#39;&gt;&amp;</td>',
    );
  });
});
