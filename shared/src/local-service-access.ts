/**
 * The local service (scripts/start) as its clients find it: the files it keeps, the keys its
 * emulators take, and whether it answers.
 */

/** Where the local service writes what a client needs while it runs, and reads its tenant registry, by default. */
export const LOCAL_SERVICE_FILES = { outputs: '.local/outputs.json', tenants: '.local/tenants.json' } as const;

/** The emulators accept any keys; these never leave the machine. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

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
