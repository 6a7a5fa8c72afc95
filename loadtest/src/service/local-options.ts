import type { TenantsDocument } from '@adhoc-scheduler/shared';

/** What the harness asks of a local service it starts (in a child process or in its own). */
export interface LocalServiceOptions {
  /** SCHEDULER_* overrides, e.g. a shorter near-path window. */
  readonly env: Readonly<Record<string, string>>;
  readonly emitterConcurrency: number | undefined;
  /** The tenants registered in the service, with their quotas. */
  readonly tenants: TenantsDocument;
  /** Persistent state; in memory when undefined. */
  readonly dataDir: string | undefined;
  /** Where the service's logs go. */
  readonly logFile: string;
}
