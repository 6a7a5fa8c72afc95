import { pastOccurrenceOutcomes, pastOccurrences, occurrenceEventIds, type PastOccurrence } from '../domain/series-past.js';
import type { SeriesRecord } from '../domain/series.js';
import type { SeriesListing } from './ports/listing.js';

/**
 * The last `n` occurrences of a series due by `now`, newest first, each with the event it became
 * (read in one batch) and its lateness: what operators see of how a series has gone.
 */
export async function lastOccurrences(
  listing: Pick<SeriesListing, 'events'>,
  series: SeriesRecord,
  now: number,
  n: number,
): Promise<PastOccurrence[]> {
  const past = pastOccurrences(series, now, n);
  if (past.length === 0) return [];
  const events = await listing.events(occurrenceEventIds(series.id, past));
  return pastOccurrenceOutcomes(series.id, past, events);
}
