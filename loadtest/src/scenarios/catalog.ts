import { backlog } from './backlog.js';
import { chaos } from './chaos.js';
import { fairness } from './fairness.js';
import { far } from './far.js';
import { hotspot } from './hotspot.js';
import { ingest } from './ingest.js';
import { listing } from './listing.js';
import { neighbour } from './neighbour.js';
import type { Scenario } from './scenario.js';
import { series } from './series.js';
import { seriesKill } from './series-kill.js';
import { steady } from './steady.js';

/** Every scenario by the name the command line gives it, in the order --help lists them. */
export const SCENARIOS = {
  steady,
  hotspot,
  far,
  ingest,
  backlog,
  listing,
  fairness,
  neighbour,
  chaos,
  series,
  'series-kill': seriesKill,
} as const satisfies Readonly<Record<string, Scenario>>;

export type ScenarioName = keyof typeof SCENARIOS;

export function isScenarioName(name: string): name is ScenarioName {
  return Object.hasOwn(SCENARIOS, name);
}
