import { PageTokenError } from '@adhoc-scheduler/shared';
import { LOCATION_OPTIONS, wholeNumber } from './arguments.js';
import { AdminUsageError } from './errors.js';
import { LIST_LIMIT } from './usage.js';

/** What the listings a page at a time take (events, series): whose, by label, how many, from which page, and where. */
export const PAGED_LISTING_OPTIONS = {
  tenant: { type: 'string' },
  label: { type: 'string' },
  limit: { type: 'string', default: String(LIST_LIMIT.default) },
  after: { type: 'string' },
  json: { type: 'boolean', default: false },
  tenants: { type: 'string' },
  'shard-count': { type: 'string' },
  ...LOCATION_OPTIONS,
} as const;

/** --limit, within the listings' bounds. */
export function pageLimit(text: string, command: string): number {
  return wholeNumber('--limit', text, { min: 1, max: LIST_LIMIT.max }, command);
}

/** --shard-count, when given: the scheduler's SCHEDULER_SHARD_COUNT, for a table named by --table. */
export function shardCountOption(text: string | undefined, command: string): number | undefined {
  return text === undefined ? undefined : wholeNumber('--shard-count', text, { min: 1, max: 256 }, command);
}

/** Reads a page; its token is the store's, opaque here: one that does not parse was not printed by a previous page. */
export async function readPage<T>(after: string | undefined, command: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof PageTokenError)
      throw new AdminUsageError(`--after "${after ?? ''}" is not a token a previous page printed`, command);
    throw error;
  }
}
