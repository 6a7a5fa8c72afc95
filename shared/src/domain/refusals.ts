import { eventIdFor } from './event.js';
import type { EventRejectedError, ReasonCode } from './reasons.js';

/**
 * A request a tenant's input topic carried and ingest refused, kept so that its operator and
 * client can find out why (`scripts/admin refusals`, `event show`, the console), not only on the
 * failure topic and in the service's log.
 */
export interface Refusal {
  readonly tenant: string;
  /** When ingest refused it, epoch ms. */
  readonly at: number;
  readonly reason: ReasonCode;
  readonly message: string;
  /** The SNS MessageId of the refused request. */
  readonly inputMessageId: string;
  /** What it asked for: `schedule`, or the control request's `action` as written. */
  readonly action: string;
  /** The event it named or would have created, when it names one (see refusalOf). */
  readonly eventId: string | undefined;
  /** The request's `id`, as written. */
  readonly clientId: string | undefined;
  /** The request's `user`, as written. */
  readonly user: string | undefined;
}

/**
 * How many refusals are kept, and what they cost. A tenant keeps its latest `perTenant`; a batch
 * writes at most `perTenantPerBatch` of a tenant's and counts the others: a flood of refusals
 * costs one counter write and at most that many item writes per tenant and batch, and never
 * more items than `perTenant` (the one BatchGetItem that reads them back). Each is kept for
 * the scheduler's retention period at most (SCHEDULER_RETENTION_SECONDS, by TTL).
 */
export const REFUSALS_KEPT = { perTenant: 100, perTenantPerBatch: 10 } as const;

/** Longest text kept of a refusal's fields: its item stays within one write unit. */
const KEPT_CHARS = { message: 400, quoted: 128 } as const;

function quoted(value: unknown, limit: number = KEPT_CHARS.quoted): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.length > limit ? `${value.slice(0, limit)}...` : value;
  return text.toWellFormed();
}

/**
 * The refusal of one input message. Its event id is the one `event show` looks up: the event it
 * names (a cancel's or reschedule's `event_id`, or its `id` as the scheduler derives ids), or
 * the one a schedule request would have created (from its `id`, else from its MessageId).
 */
export function refusalOf(
  tenant: string,
  request: { readonly input: unknown; readonly inputMessageId: string },
  error: Pick<EventRejectedError, 'reason' | 'message'>,
  at: number,
  eventId?: string,
): Refusal {
  const fields: Readonly<Record<string, unknown>> =
    typeof request.input === 'object' && request.input !== null && !Array.isArray(request.input)
      ? (request.input as Record<string, unknown>)
      : {};
  const action = quoted(fields.action) ?? 'schedule';
  const clientId = typeof fields.id === 'string' ? fields.id : undefined;
  const user = typeof fields.user === 'string' ? fields.user : undefined;
  const named =
    eventId ??
    quoted(fields.event_id) ??
    (clientId !== undefined ? eventIdFor(tenant, user ?? '', clientId, '') : undefined) ??
    (action === 'schedule' ? eventIdFor(tenant, '', undefined, request.inputMessageId) : undefined);
  return {
    tenant,
    at,
    reason: error.reason,
    message: quoted(error.message, KEPT_CHARS.message) ?? '',
    inputMessageId: request.inputMessageId,
    action,
    eventId: named,
    clientId: quoted(clientId),
    user: quoted(user),
  };
}

/** One tenant's refusals of a batch: those to keep, and how many more were refused and only counted. */
export interface TenantRefusals {
  readonly tenant: string;
  readonly kept: readonly Refusal[];
  readonly notKept: number;
}

/** A batch's refusals by tenant, the first `perTenantPerBatch` of each kept and the rest counted. */
export function refusalsToKeep(
  refusals: readonly Refusal[],
  perTenantPerBatch: number = REFUSALS_KEPT.perTenantPerBatch,
): TenantRefusals[] {
  const byTenant = new Map<string, { kept: Refusal[]; notKept: number }>();
  for (const refusal of refusals) {
    const entry = byTenant.get(refusal.tenant) ?? { kept: [], notKept: 0 };
    if (entry.kept.length < perTenantPerBatch) entry.kept.push(refusal);
    else entry.notKept += 1;
    byTenant.set(refusal.tenant, entry);
  }
  return [...byTenant].map(([tenant, { kept, notKept }]) => ({ tenant, kept, notKept }));
}

/** A tenant's kept refusals, newest first, and what was counted beside them. */
export interface RecentRefusals {
  readonly refusals: readonly Refusal[];
  /** Every refusal counted, kept or not, over the counter's life (it expires a retention period after the last). */
  readonly refused: number;
  /** Refusals counted and not kept (beyond a batch's share). */
  readonly notKept: number;
}
