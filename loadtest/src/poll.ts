/** Checks `done()` every `everyMs` until it holds (true), or until `deadline` (epoch ms) comes first (false). */
export async function pollUntil(done: () => boolean | Promise<boolean>, deadline: number, everyMs = 100): Promise<boolean> {
  while (!(await done())) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(everyMs, Math.max(1, deadline - Date.now()))));
  }
  return true;
}
