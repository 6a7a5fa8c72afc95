import { expect } from 'vitest';
import type { EventRecord } from '@adhoc-scheduler/shared';
import { eventText } from '../../src/admin/event-view.js';

const STEP_LINE = /^(created|queued|rescheduled|scheduled|held|emitted|failed|cancelled) +(\S+) {2}by ([^:]+)/;

/** The lifecycle lines `event show` prints for a record, as "<step> by <who>", checked to be in the order of their times. */
export function shownSteps(record: EventRecord): string[] {
  const steps = eventText(record)
    .split('\n')
    .flatMap((line) => {
      const match = STEP_LINE.exec(line);
      return match ? [{ step: match[1], at: Date.parse(String(match[2])), by: match[3] }] : [];
    });
  const times = steps.map(({ at }) => at);
  expect(times).toEqual([...times].sort((a, b) => a - b));
  return steps.map(({ step, by }) => `${step} by ${by}`);
}
