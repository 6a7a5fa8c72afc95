/**
 * An SDK or network error in a few words, on one line, with its cause when the message leaves
 * it out (a refused connection has only a code, ECONNREFUSED): what a command prints instead
 * of a stack trace.
 */
export function describeError(error: unknown): string {
  const { code, message, name, cause } = (error ?? {}) as { code?: unknown; message?: unknown; name?: unknown; cause?: unknown };
  const own = [message, code, name].find((text): text is string => typeof text === 'string' && text.trim() !== '') ?? String(error);
  const because = cause === undefined ? '' : describeError(cause);
  const text = because === '' || own.includes(because) ? own : `${own.replace(/:\s*$/, '')}: ${because}`;
  return text.replace(/\s*\n\s*/g, ' ');
}
