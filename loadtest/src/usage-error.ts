/** A command line the load test cannot take: the CLI reports why, with its usage. */
export class LoadTestUsageError extends Error {
  override readonly name = 'LoadTestUsageError';
}
