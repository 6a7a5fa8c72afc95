import { describe, expect, it } from 'vitest';
import { planKills, runKills, SPIKE_KILL_WINDOW_MS, type PlannedKill, type Restart } from '../src/chaos/kills.js';
import { seededRandom } from '../src/chaos/random.js';

const FROM = 1_800_000_000_000;
const UNTIL = FROM + 250_000;
const SPIKE = FROM + 130_000;

describe('planKills', () => {
  it('puts one kill at the spike and one in each equal slice of the run, apart from each other', () => {
    const kills = planKills({ count: 5, from: FROM, until: UNTIL, spikeAt: SPIKE, minGapMs: 20_000, random: seededRandom(42) });

    expect(kills).toHaveLength(5);
    expect(kills.map((kill) => kill.at)).toEqual([...kills.map((kill) => kill.at)].sort((a, b) => a - b));
    const atSpike = kills.filter((kill) => kill.atSpike);
    expect(atSpike).toHaveLength(1);
    expect(Math.abs((atSpike[0] as PlannedKill).at - SPIKE)).toBeLessThanOrEqual(SPIKE_KILL_WINDOW_MS);
    const spread = kills.filter((kill) => !kill.atSpike);
    const slice = (UNTIL - FROM) / 4;
    spread.forEach((kill, index) => {
      expect(kill.at).toBeGreaterThanOrEqual(FROM + slice * index);
      expect(kill.at).toBeLessThan(FROM + slice * (index + 1));
    });
    for (let i = 1; i < kills.length; i += 1)
      expect((kills[i] as PlannedKill).at - (kills[i - 1] as PlannedKill).at).toBeGreaterThanOrEqual(20_000);
  });

  it('draws the same moments from the same seed, and spreads them all without a spike', () => {
    const options = { count: 5, from: FROM, until: UNTIL, spikeAt: undefined, minGapMs: 0 };
    const kills = planKills({ ...options, random: seededRandom(7) });

    expect(kills).toHaveLength(5);
    expect(planKills({ ...options, random: seededRandom(7) })).toEqual(kills);
    expect(kills.every((kill) => !kill.atSpike && kill.at >= FROM && kill.at < UNTIL)).toBe(true);
    expect(planKills({ ...options, count: 0, random: seededRandom(7) })).toEqual([]);
  });
});

/** A service whose restarts take `downMs`, recording when each kill came. */
function fakeService(downMs: number) {
  const kills: number[] = [];
  return {
    kills,
    async killAndRestart(): Promise<Restart> {
      const killedAt = Date.now();
      kills.push(killedAt);
      await new Promise((resolve) => setTimeout(resolve, downMs));
      return { killedAt, emulatorsGoneAt: killedAt, readyAt: Date.now() };
    },
  };
}

describe('runKills', () => {
  it('kills no sooner than planned, and not again until the service has run a while after its restart', async () => {
    const service = fakeService(30);
    const now = Date.now();
    const plan = [
      { at: now + 20, atSpike: false },
      { at: now + 25, atSpike: true },
    ];

    const kills = await runKills(service, plan, { minUptimeMs: 50, deadline: now + 60_000 });

    expect(kills.map(({ n, atSpike }) => ({ n, atSpike }))).toEqual([
      { n: 1, atSpike: false },
      { n: 2, atSpike: true },
    ]);
    expect(kills[0]?.killedAt).toBeGreaterThanOrEqual(now + 20);
    expect(kills[1]?.killedAt).toBeGreaterThanOrEqual((kills[0]?.readyAt ?? 0) + 50);
  });

  it('makes no kill past the deadline, and stops waiting when aborted', async () => {
    const service = fakeService(1);
    const now = Date.now();

    expect(await runKills(service, [{ at: now + 60_000, atSpike: false }], { minUptimeMs: 0, deadline: now + 1_000 })).toEqual([]);
    const abort = new AbortController();
    const waiting = runKills(service, [{ at: now + 60_000, atSpike: false }], {
      minUptimeMs: 0,
      deadline: now + 120_000,
      signal: abort.signal,
    });
    abort.abort();
    await expect(waiting).rejects.toThrow(/abort/i);
    expect(service.kills).toEqual([]);
  });
});
