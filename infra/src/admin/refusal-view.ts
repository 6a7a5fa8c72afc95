import { REFUSALS_KEPT, type RecentRefusals, type Refusal } from '@adhoc-scheduler/shared';
import { fields, iso, table } from './format.js';

/** A refusal for machines: every field, its time as ISO 8601. */
export function refusalJson(refusal: Refusal): Record<string, unknown> {
  return { ...refusal, at: iso(refusal.at) };
}

/** What `event show` says of an id that was refused at ingest and never became an event. */
export function refusalText(refusal: Refusal): string {
  return fields([
    ['event', refusal.eventId ?? '-'],
    ['tenant', refusal.tenant],
    ['state', `refused at ingest: ${refusal.reason}`],
    ['message', refusal.message],
    ['refused', iso(refusal.at)],
    ['action', refusal.action],
    ...(refusal.clientId === undefined ? [] : ([['client id', refusal.clientId]] as const)),
    ...(refusal.user === undefined ? [] : ([['user', refusal.user]] as const)),
    ['input message', refusal.inputMessageId],
  ]);
}

/** A tenant's latest refusals, newest first, one line each. */
export function refusalsTable(refusals: readonly Refusal[]): string {
  const header = ['REFUSED', 'CLIENT ID', 'USER', 'ACTION', 'REASON', 'MESSAGE'];
  const rows = refusals.map((refusal) => [
    iso(refusal.at),
    refusal.clientId ?? '-',
    refusal.user ?? '-',
    refusal.action,
    refusal.reason,
    refusal.message,
  ]);
  return table([header, ...rows]);
}

/** The line under a listing that says what the refusal log did not keep. */
export function notKeptNote({ refused, notKept }: Pick<RecentRefusals, 'refused' | 'notKept'>): string | undefined {
  return notKept === 0
    ? undefined
    : `${refused} refused in all; ${notKept} of them in floods were counted, not kept (at most ${REFUSALS_KEPT.perTenantPerBatch} a tenant in one ingest batch)`;
}
