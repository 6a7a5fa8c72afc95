import { Cron } from 'croner';

// croner computes a cron expression's calendar on a wall clock: here a clock without daylight
// saving (offset 0), whose readings stand for the series' zone's local date-times. Which instant
// a local date-time is, when the zone skips or repeats it, is ours to decide (dst-walk.ts), by
// the rule the client chose, rather than croner's, which ties it to the expression's shape.
const OPTIONS = {
  utcOffset: 0,
  // EventBridge numbers the days of the week 1 (Sunday) to 7, as Quartz does.
  alternativeWeekdays: true,
  // Seconds, then EventBridge's six fields.
  mode: '7-part',
} as const;

const calendars = new Map<string, Cron>();
/** Compiled patterns kept: enough for every series a tick handles, and bounded. */
const KEPT = 10_000;

/** croner's calendar of a pattern; throws croner's error when croner refuses the pattern. */
export function wallCalendar(pattern: string): Cron {
  let calendar = calendars.get(pattern);
  if (!calendar) {
    calendar = new Cron(pattern, OPTIONS);
    if (calendars.size >= KEPT) calendars.clear();
    calendars.set(pattern, calendar);
  }
  return calendar;
}

/** The pattern's first local date-time strictly after `afterWall` (both as wall-clock ms), or undefined when it has no more. */
export function nextWallTime(pattern: string, afterWall: number): number | undefined {
  return wallCalendar(pattern).nextRun(new Date(afterWall))?.getTime();
}
