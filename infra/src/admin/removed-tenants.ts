import { DEFAULTS, leftoversLastSeconds } from '@adhoc-scheduler/shared';
import { DEAD_LETTER_RETENTION_SECONDS } from '../queues.js';

/**
 * What a removed tenant may leave, and for how long (see TenantRemoval): its records for the
 * default retention, its dead letters for the dead-letter queues' (the local service's and a stack's alike).
 */
export const REMOVED_TENANT_LEFTOVERS = {
  retentionSeconds: DEFAULTS.retentionSeconds,
  deadLetterRetentionSeconds: DEAD_LETTER_RETENTION_SECONDS,
};

/** The days a removed tenant's id stays its own, as the commands' help says it. */
export const REUSE_DAYS = leftoversLastSeconds(REMOVED_TENANT_LEFTOVERS) / (24 * 3600);
