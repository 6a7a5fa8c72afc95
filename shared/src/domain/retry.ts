/**
 * When a publish that failed for a reason a retry may fix (throttling, an outage) is tried
 * again: a second after the first failure, doubling up to 15 minutes, each delay moved by up to
 * a fifth either way so that the events of one outage do not all come back in the same second.
 * The count is of deliveries, and a delivery cut short by a crash counts too: a fault met after
 * a restart is retried within seconds, not after the back-off of the deliveries before it
 * (starting at 5 s, three faults after a kill made an event 72 to 90 s late in the chaos run).
 */
export const PUBLISH_RETRY = { firstDelaySeconds: 1, maxDelaySeconds: 900, jitter: 0.2 } as const;

/**
 * When ends handed over through the delay queue are tried again: a second after the first
 * failure, doubling up to the configured maximum (`endsRetryMaxSeconds`), never beyond it (a
 * repaired copy's delay counts on it), spread like publish retries.
 */
const ENDS_RETRY = { firstDelaySeconds: 1, jitter: 0.2 } as const;

/** `seconds` moved by up to `jitter` either way; `random` is in [0, 1). */
function spread(seconds: number, jitter: number, random: number): number {
  return Math.max(1, Math.round(seconds * (1 + jitter * (2 * random - 1))));
}

/** Seconds before the next try after `failures` failed deliveries; `random` is in [0, 1). */
export function retryDelaySeconds(failures: number, random: number): number {
  const base = Math.min(PUBLISH_RETRY.maxDelaySeconds, PUBLISH_RETRY.firstDelaySeconds * 2 ** Math.max(0, failures - 1));
  return spread(base, PUBLISH_RETRY.jitter, random);
}

/** Seconds before handed-over ends are tried again after `failures` failed deliveries: at most `maxDelaySeconds`. */
export function endsRetryDelaySeconds(failures: number, random: number, maxDelaySeconds: number): number {
  const base = Math.min(maxDelaySeconds, ENDS_RETRY.firstDelaySeconds * 2 ** Math.max(0, failures - 1));
  return Math.min(maxDelaySeconds, spread(base, ENDS_RETRY.jitter, random));
}

/**
 * How long a copy's publish has been retried, in whole seconds: from when the copy became due for
 * the emitter, the later of its event's due time and when the copy was sent to the delay queue.
 * So an event dated in the past, sent at once, or a copy sent again by the repair sweep, gets the
 * whole `emitMaxAgeSeconds` of retries rather than none. `sentAt` 0 (unknown) counts from the due time.
 */
export function publishAgeSeconds(now: number, dueAt: number, sentAt: number): number {
  return Math.floor((now - Math.max(dueAt, sentAt)) / 1000);
}

/**
 * The most deliveries an event's message can take while its publish is retried for `maxAgeSeconds`
 * (every delay at its shortest): the delay queue must not set it aside before then.
 */
export function deliveriesWithin(maxAgeSeconds: number): number {
  let deliveries = 1;
  for (let elapsed = 0; elapsed < maxAgeSeconds; deliveries++) elapsed += retryDelaySeconds(deliveries, 0);
  return deliveries;
}
