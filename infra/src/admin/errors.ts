/** The command ran and failed in a way the operator can act on (unknown event, service not running): exit code 1. */
export class AdminError extends Error {
  override readonly name = 'AdminError';
}

/** The command line is wrong: exit code 2, pointing at the command's --help. */
export class AdminUsageError extends Error {
  override readonly name = 'AdminUsageError';

  constructor(
    message: string,
    /** The command whose usage was broken, e.g. "tenant add"; empty for the top level. */
    readonly command: string,
  ) {
    super(message);
  }
}

/** Whether the error is a service's answer (it has an HTTP status), not a failure to reach it. */
export function isServiceAnswer(error: unknown): boolean {
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    if ((current as { $metadata?: { httpStatusCode?: unknown } }).$metadata?.httpStatusCode !== undefined) return true;
  }
  return false;
}
