import type { RecentRefusals, TenantRefusals } from '../../domain/refusals.js';

/** What failed, kept for operators and clients to find: each failed record's last error, and each tenant's latest refusals. */

/** Why a function failed a record, as the dead-letter tools show it beside the message. */
export interface LastError {
  /** The SQS message id: SQS keeps it when it moves the message to a dead-letter queue. */
  readonly messageId: string;
  /** The function that failed it (ingest, loading, emitter, ...). */
  readonly fn: string;
  readonly error: { readonly name: string; readonly message: string };
  /** When it failed, epoch ms. */
  readonly at: number;
  /** The delivery that failed (1 on the first). */
  readonly receiveCount: number;
}

/** The last error of each record a function failed, by message id: written as records fail, read by the dead-letter tools. */
export interface LastErrors {
  /** Keeps each error, replacing the message's earlier one. */
  write(errors: readonly LastError[]): Promise<void>;
  /** The last errors of these messages (a message without one is absent). */
  read(messageIds: readonly string[]): Promise<ReadonlyMap<string, LastError>>;
}

/** A tenant's latest refusals (see REFUSALS_KEPT): written by ingest after its batch, read by the admin CLI and the console. */
export interface RefusalLog {
  /**
   * Keeps one batch's refusals of each tenant, overwriting that tenant's oldest beyond
   * REFUSALS_KEPT.perTenant, and counts the ones not kept; each kept until `expiresAt` (epoch seconds).
   */
  keep(batch: readonly TenantRefusals[], expiresAt: number): Promise<void>;
  /** A tenant's kept refusals, newest first. */
  recent(tenant: string): Promise<RecentRefusals>;
}
