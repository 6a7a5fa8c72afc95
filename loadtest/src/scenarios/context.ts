import type { Progress } from '../progress.js';
import type { HarnessClients, SchedulerService } from '../service/connection.js';
import type { CrashableService } from '../service/crashable.js';

/** How the harness measures, whatever the scenario. */
export interface MeasureOptions {
  /** Concurrent long polls on the consumer queue. */
  readonly consumers: number;
  /** Deliveries later than this count as late (progress bar and counts). */
  readonly lateMs: number;
  /** How long after the last due time missing events are still waited for. */
  readonly drainSeconds: number;
  /** How long after the last delivery the consumer keeps listening for duplicates. */
  readonly settleSeconds: number;
  /** PublishBatch requests in flight at once. */
  readonly publishConcurrency: number;
  /** Size of each event's payload. */
  readonly payloadBytes: number;
  /** Labels each published event carries (see LABELS_OF). */
  readonly labels: number;
}

/** Everything a scenario works with. */
export interface RunContext {
  readonly runId: string;
  /** The `user` of the run's requests. */
  readonly user: string;
  readonly service: SchedulerService;
  readonly clients: HarnessClients;
  readonly progress: Progress;
  readonly measure: MeasureOptions;
  /** The run gives up at this time (epoch ms), whatever it is doing. */
  readonly deadline: number;
  /** The same service, when the harness may kill and restart it (the chaos scenario). */
  readonly crashable?: CrashableService | undefined;
}
