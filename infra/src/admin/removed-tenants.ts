import { DEFAULTS, leftoversLastSeconds } from '@adhoc-scheduler/shared';
import { DEAD_LETTER_RETENTION_SECONDS } from '../queues.js';

/** What a tenant removed from the local service may leave, and for how long (see TenantRemoval). */
export const LOCAL_LEFTOVERS = { retentionSeconds: DEFAULTS.retentionSeconds, deadLetterRetentionSeconds: DEAD_LETTER_RETENTION_SECONDS };

/** The days a removed tenant's id stays its own, as the commands' help says it. */
export const REUSE_DAYS = leftoversLastSeconds(LOCAL_LEFTOVERS) / (24 * 3600);
