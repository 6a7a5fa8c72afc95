import { describe, expect, it } from 'vitest';
import { NoticePace } from '../src/app/notice-pace.js';

/** A pack that runs until the test answers it, recording when it starts. */
function pack(started: string[], name: string) {
  let answer = (): void => {};
  const answered = new Promise<void>((resolve) => (answer = resolve));
  const send = async (): Promise<string> => {
    started.push(name);
    await answered;
    return name;
  };
  return { send, answer };
}

describe('the notice pace', () => {
  it('runs one pack at a time, and gives each its own answer', async () => {
    const pace = new NoticePace();
    const started: string[] = [];
    const [a, b] = [pack(started, 'a1'), pack(started, 'a2')];
    const runs = [pace.run('acme', a.send), pace.run('acme', b.send)];
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['a1']);
    a.answer();
    await expect(runs[0]).resolves.toBe('a1');
    expect(started).toEqual(['a1', 'a2']);
    b.answer();
    await expect(runs[1]).resolves.toBe('a2');
  });

  it("lets tenants take turns: another tenant's pack waits for one of a flooding tenant's, not for its whole flood", async () => {
    const pace = new NoticePace();
    const started: string[] = [];
    const byName = new Map<string, ReturnType<typeof pack>>();
    const runs = ['noisy-1', 'noisy-2', 'noisy-3', 'noisy-4', 'quiet-1'].map((name) => {
      const one = pack(started, name);
      byName.set(name, one);
      return pace.run(name.split('-')[0] as string, one.send);
    });
    // Each pack is answered once it has started; only then may the next start.
    for (let count = 1; count <= runs.length; count += 1) {
      await new Promise((resolve) => setImmediate(resolve));
      expect(started).toHaveLength(count);
      byName.get(started.at(-1) as string)?.answer();
    }
    await Promise.all(runs);
    expect(started).toEqual(['noisy-1', 'noisy-2', 'quiet-1', 'noisy-3', 'noisy-4']);
  });

  it('frees its place when a pack fails, for the next to run', async () => {
    const pace = new NoticePace();
    await expect(pace.run('acme', () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    await expect(pace.run('acme', async () => 'next')).resolves.toBe('next');
  });
});
