/** The load test's exit codes, what a script that runs it can tell apart. */
export const EXIT_CODE = {
  /** The run completed; its targets are printed, met or MISS. */
  done: 0,
  /** The run itself failed: the service did not start, a restart failed, --max-minutes passed. */
  failed: 1,
  /** The command line is wrong. */
  usage: 2,
  /** With --fail-on-miss: the run completed and missed a target. */
  targetMissed: 3,
} as const;

/** A completed run's exit code, and the line that says what its targets came to. */
export function verdict(
  targets: readonly { readonly met: boolean }[],
  failOnMiss: boolean,
): { readonly code: number; readonly line: string } {
  const missed = targets.filter((target) => !target.met).length;
  if (missed === 0) return { code: EXIT_CODE.done, line: `every target met (${targets.length})` };
  const line = `${missed} of ${targets.length} targets missed`;
  return failOnMiss
    ? { code: EXIT_CODE.targetMissed, line: `${line}: exit code ${EXIT_CODE.targetMissed} (--fail-on-miss)` }
    : { code: EXIT_CODE.done, line: `${line}; exit code ${EXIT_CODE.done} (--fail-on-miss makes a miss exit ${EXIT_CODE.targetMissed})` };
}
