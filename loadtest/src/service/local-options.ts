import type { EmulatorPorts } from '@adhoc-scheduler/infra';
import type { TenantsDocument } from '@adhoc-scheduler/shared';
import type { ServiceFaults } from '../chaos/faults.js';

/** What the harness asks of a local service it starts (in a child process or in its own). */
export interface LocalServiceOptions {
  /** Settings by their environment variables (the config module's ENV), e.g. a shorter near-path window. */
  readonly env: Readonly<Record<string, string>>;
  readonly emitterConcurrency: number | undefined;
  /** The tenants registered in the service, with their quotas: a fixed registry, or a file it re-reads as it changes (scripts/start's). */
  readonly tenants: TenantsDocument | { readonly file: string };
  /** Persistent state; in memory when undefined. */
  readonly dataDir: string | undefined;
  /** Where the service's logs go. */
  readonly logFile: string;
  /** Fixed emulator ports and resource names, so that a restart on the same data directory keeps every endpoint and URL. */
  readonly ports?: EmulatorPorts | undefined;
  readonly namePrefix?: string | undefined;
  /** Transient errors injected into the service's SNS, SQS and DynamoDB calls (child process only). */
  readonly faults?: ServiceFaults | undefined;
}
