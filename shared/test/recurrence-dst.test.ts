import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nextOccurrences } from '../src/domain/recurrence/occurrences.js';
import { GOLDEN_CASES, type GoldenCase, RULES } from './recurrence-golden.js';
import { firstOccurrences, specOf } from './recurrence-kit.js';

const label = (golden: GoldenCase) => `${golden.zone}, ${golden.expression} from ${golden.start}, ${golden.rule}`;

describe('the golden daylight-saving cases', () => {
  it.each(GOLDEN_CASES.map((golden) => [label(golden), golden] as const))('%s', (_, golden) => {
    const spec = specOf(golden.expression, golden.start, { timezone: golden.zone, dst: RULES[golden.rule] });
    expect(firstOccurrences(spec, golden.occurrences.length)).toEqual(golden.occurrences);
  });

  it('keeps the offset on an occurrence moved past a gap, as on any other', () => {
    const spec = specOf('cron(30 2 * * ? *)', '2026-03-08T00:00:00Z', { timezone: 'America/New_York', dst: RULES.shift, offsetMs: 250 });
    expect(firstOccurrences(spec, 2)).toEqual(['2026-03-08T07:00:00.250Z', '2026-03-09T06:30:00.250Z']);
  });

  it('starting inside the second pass of a repeated hour, runs none of its times again under "first"', () => {
    // 06:10Z on 1 November is 01:10 EST, the second 01:10 in New York: 01:30 ran at 05:30Z.
    const spec = specOf('cron(0/30 1-2 * * ? *)', '2026-11-01T04:00:00Z', { timezone: 'America/New_York' });
    const after = Date.parse('2026-11-01T06:10:00Z');
    expect(nextOccurrences(spec, { after, fired: 2 }, 2).map((at) => new Date(at).toISOString())).toEqual([
      '2026-11-01T07:00:00.000Z',
      '2026-11-01T07:30:00.000Z',
    ]);
    const both = { ...spec, dst: RULES.both };
    expect(nextOccurrences(both, { after, fired: 3 }, 1).map((at) => new Date(at).toISOString())).toEqual(['2026-11-01T06:30:00.000Z']);
  });

  it('starting at the instant a gap ends, does not run the shifted time again', () => {
    const spec = specOf('cron(30 2 * * ? *)', '2026-03-07T00:00:00Z', { timezone: 'America/New_York', dst: RULES.shift });
    const after = Date.parse('2026-03-08T07:00:00Z');
    expect(nextOccurrences(spec, { after, fired: 2 }, 1).map((at) => new Date(at).toISOString())).toEqual(['2026-03-09T06:30:00.000Z']);
  });
});

/** The row docs/design.md shows for a golden case. */
function tableRow(golden: GoldenCase): string {
  const instants = golden.occurrences.map((iso) => `${iso.slice(5, 10)} ${iso.slice(11, 16)}`).join(', ');
  return `| ${golden.zone} | ${golden.change} | \`${golden.expression}\` | ${golden.rule} | ${instants} |`;
}

describe("the design page's daylight-saving table", () => {
  it('shows every golden case as the tests check it, and nothing else', () => {
    const page = readFileSync(new URL('../../docs/design.md', import.meta.url), 'utf8');
    const header = '| zone | change | expression | rule | first occurrences (2026, UTC) |';
    const start = page.indexOf(header);
    expect(start).toBeGreaterThan(-1);
    const rows = page
      .slice(start)
      .split('\n')
      .slice(2)
      .filter((line, index, lines) => line.startsWith('|') && lines.slice(0, index).every((before) => before.startsWith('|')));
    expect(rows).toEqual(GOLDEN_CASES.map(tableRow));
  });
});
