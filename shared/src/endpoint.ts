/**
 * Whether anything answers HTTP at an endpoint: how a client of the local service tells a
 * running service from the outputs file one killed with `kill -9` left behind.
 */
export async function answers(endpoint: string, timeoutMs = 3_000): Promise<boolean> {
  try {
    const response = await fetch(endpoint, { signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
    return true;
  } catch {
    return false;
  }
}
