import { describe, expect, it } from 'vitest';
import { EVENT_STATE, type EventRecord } from '@adhoc-scheduler/shared';
import { overviewFigures, TIMELINE_SLOT_MS } from '../../src/console/figures.js';
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
  it('count the next hour by five-minute slot, and the last hour by outcome and lateness', () => {
    const figures = overviewFigures(
      NOW,
      [record({ dueAt: NOW }), record({ dueAt: NOW + TIMELINE_SLOT_MS - 1 }), record({ dueAt: NOW + 59 * 60_000 })],
      [
        record({ state: EVENT_STATE.emitted, dueAt: NOW - 1000, emittedAt: NOW - 995 }),
        record({ state: EVENT_STATE.emitted, dueAt: NOW - 2000, emittedAt: NOW - 1950 }),
        record({ state: EVENT_STATE.emitted, dueAt: NOW - 9000, emittedAt: NOW - 2000 }),
        record({ state: EVENT_STATE.failed, dueAt: NOW - 3000, failedAt: NOW - 2000 }),
        record({ state: EVENT_STATE.cancelled, dueAt: NOW - 3000, cancelledAt: NOW - 9000 }),
      ],
    );
    expect(figures.dueNextHour.map((slot) => slot.count)).toEqual([2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    expect(figures.dueNextHour[1]?.from).toBe(NOW + TIMELINE_SLOT_MS);
    expect(figures).toMatchObject({ emittedLastHour: 3, failedLastHour: 1 });
    expect(figures.lateness.filter((bin) => bin.count > 0)).toEqual([
      { label: '0 ms to 10 ms', count: 1 },
      { label: '50 ms to 100 ms', count: 1 },
      { label: '5 s or more', count: 1 },
    ]);
  });
});

describe('the pages', () => {
  it('escape every value they show', () => {
    expect(html`<td title="${'"><script>'}">${"<img src=x onerror='1'>&"}</td>`.text).toBe(
      '<td title="&quot;&gt;&lt;script&gt;">&lt;img src=x onerror=&#39;1&#39;&gt;&amp;</td>',
    );
  });
});
