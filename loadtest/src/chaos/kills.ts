import { setTimeout as sleep } from 'node:timers/promises';

/** A kill aimed at the spike lands this close to its due second: while the emitter holds and publishes its events. */
export const SPIKE_KILL_WINDOW_MS = 1_000;
/** How often a kill's moment may be drawn again to keep it `minGapMs` from the others. */
const RESAMPLE_TRIES = 20;

/** One kill -9 and the restart after it, epoch ms. */
export interface Restart {
  readonly killedAt: number;
  /** The emulators of the killed service had exited: their ports were free again. */
  readonly emulatorsGoneAt: number;
  /** The new service process was ready (resources checked, pollers and loader started). */
  readonly readyAt: number;
}

/** A service the harness can kill and start again. */
export interface Killable {
  killAndRestart(): Promise<Restart>;
}

export interface PlannedKill {
  /** Epoch ms. */
  readonly at: number;
  /** Aimed at the spike's due second. */
  readonly atSpike: boolean;
}

export interface KillPlanOptions {
  readonly count: number;
  /** Kills fall in [from, until), epoch ms. */
  readonly from: number;
  readonly until: number;
  /** The spike's due second (epoch ms), if the run has one: one kill lands within SPIKE_KILL_WINDOW_MS of it. */
  readonly spikeAt: number | undefined;
  /** Kept between kills where the span allows. */
  readonly minGapMs: number;
  readonly random: () => number;
}

/**
 * Random kill moments spread over a run: one at the spike (when there is one), the others one
 * in each equal slice of the span, at a random moment of their slice, kept `minGapMs` from
 * each other where the slice leaves room.
 */
export function planKills(options: KillPlanOptions): PlannedKill[] {
  const { count, from, until, spikeAt, minGapMs, random } = options;
  const kills: PlannedKill[] = [];
  if (count > 0 && spikeAt !== undefined) kills.push({ at: spikeAt + (random() * 2 - 1) * SPIKE_KILL_WINDOW_MS, atSpike: true });
  const spread = count - kills.length;
  const slice = (until - from) / Math.max(1, spread);
  for (let index = 0; index < spread; index += 1) {
    const pick = (): number => from + slice * (index + random());
    let at = pick();
    for (let attempt = 1; attempt < RESAMPLE_TRIES && kills.some((kill) => Math.abs(kill.at - at) < minGapMs); attempt += 1) at = pick();
    kills.push({ at, atSpike: false });
  }
  return kills.sort((a, b) => a.at - b.at);
}

/** A kill as it happened. */
export interface KillRecord extends Restart {
  /** 1 for the first kill. */
  readonly n: number;
  readonly plannedAt: number;
  readonly atSpike: boolean;
}

/**
 * Kills the service at each planned moment and starts it again, one kill at a time: a kill
 * whose moment came while the service was down, or within `minUptimeMs` of its start, waits
 * for that. Kills that would come after `deadline` are not made; `signal` ends the waiting.
 */
export async function runKills(
  service: Killable,
  plan: readonly PlannedKill[],
  options: {
    readonly minUptimeMs: number;
    readonly deadline: number;
    readonly signal?: AbortSignal;
    readonly onRestart?: (kill: KillRecord) => void;
  },
): Promise<KillRecord[]> {
  const kills: KillRecord[] = [];
  let upSince = Date.now();
  for (const planned of plan) {
    const at = Math.max(planned.at, upSince + options.minUptimeMs);
    if (at >= options.deadline) break;
    await sleep(Math.max(0, at - Date.now()), undefined, { signal: options.signal });
    const restart = await service.killAndRestart();
    const kill = { n: kills.length + 1, plannedAt: planned.at, atSpike: planned.atSpike, ...restart };
    kills.push(kill);
    options.onRestart?.(kill);
    upSince = restart.readyAt;
  }
  return kills;
}
