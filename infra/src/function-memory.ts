/**
 * Memory of each function on Lambda, which bills duration by it: read by the CDK app, and by
 * the load test to price a run.
 */
export const FUNCTION_MEMORY_MB = {
  ingest: 256,
  loader: 256,
  loading: 256,
  // It mostly waits, and memory is billed for waiting: 128 MB holds a batch of 100 events of up to 256 KiB each.
  emitter: 128,
  // A page of a job: a bulk cancel's 100 events (a BatchGetItem, then their cancels ten at a time), or a resume's query and a send or two.
  changes: 256,
} as const;
