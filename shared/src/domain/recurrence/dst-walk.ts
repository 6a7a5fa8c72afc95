import type { DstRule } from './spec.js';
import { nextWallTime } from './wall-calendar.js';
import { nextChange, offsetAt, previousChange } from './zone.js';

// The instants of a cron expression's local times in a zone, in time order, by the series'
// daylight-saving rule. The walk goes through time in stretches of one offset: within one, a
// local time is one instant (local minus offset); where the offset changes at instant T from
// `o` to `o'`:
//
// - forward (o' > o), the local times [T + o, T + o') do not exist that day (the gap). `skip`
//   runs none of them; `shift` runs them at T itself, the first instant after the gap, whose
//   local time is the gap's end (02:30 on 8 March 2026 in New York runs at 03:00 EDT,
//   07:00 UTC). Several times in one gap, or one in it and one at its end, run once at T.
// - back (o' < o), the local times [T + o', T + o) come again (the overlap). `first` runs them
//   in their first pass only; `both` runs them in each, the second an (o - o') later.

/** The first local time the walk may take when it starts at `at`, as the exclusive wall-clock floor. */
function startingFloor(zone: string, dst: DstRule, at: number, offset: number): number {
  const floor = at + offset;
  if (dst.overlap === 'both') return floor;
  // Starting inside an overlap's second pass, its local times ran in the first: go past them.
  const change = previousChange(zone, at);
  if (change === undefined) return floor;
  const before = offsetAt(zone, change - 1);
  return before > offset ? Math.max(floor, change + before - 1) : floor;
}

/** The minute-precise instants of the pattern's local times in the zone strictly after `after`, in order. */
export function* cronInstants(pattern: string, zone: string, dst: DstRule, after: number): Generator<number> {
  let at = after;
  let offset = offsetAt(zone, at);
  /** Local times strictly after this one (wall-clock ms) are still to come. */
  let floor = startingFloor(zone, dst, at, offset);
  for (;;) {
    const wall = nextWallTime(pattern, floor);
    if (wall === undefined) return;
    const candidate = wall - offset;
    const change = nextChange(zone, at, candidate, offset);
    if (change === undefined) {
      yield candidate;
      at = candidate;
      floor = wall;
      continue;
    }
    const next = offsetAt(zone, change);
    if (next > offset) {
      const inGap = nextWallTime(pattern, change + offset - 1);
      const shifted = dst.gap === 'shift' && inGap !== undefined && inGap < change + next;
      if (shifted) yield change;
      // A local time at the gap's end is the instant T too: once only, when T already ran.
      floor = shifted ? change + next : change + next - 1;
    } else {
      floor = dst.overlap === 'both' ? change + next - 1 : change + offset - 1;
    }
    at = change;
    offset = next;
  }
}
