import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Progress } from '../src/progress.js';

/** A pipe, not a terminal, with what was written to it. */
function pipe(): { readonly stream: PassThrough; readonly text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  return { stream, text: () => text };
}

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('progress without a terminal', () => {
  it('prints the counts as a line every few seconds instead of bars, and once more at the end', async () => {
    const { stream, text } = pipe();
    const progress = new Progress(true, stream, 20);
    const published = progress.bar('published', 2_167);
    const received = progress.bar('received', 2_167);
    published.update(1_200);
    received.update(900, 'late>100ms 0  early 0  dup 0');
    await until(() => text().includes('\n'));
    expect(text()).toMatch(/^\[\d+ s\] published 1,200\/2,167, received 900\/2,167 \(late>100ms 0 {2}early 0 {2}dup 0\)\n$/);

    // Unchanged counts are not repeated at once.
    published.update(2_167);
    await until(() => text().includes('published 2,167/2,167'));
    received.update(2_167);
    progress.stop();
    expect(text().trim().split('\n').at(-1)).toMatch(/published 2,167\/2,167, received 2,167\/2,167/);
    expect(
      text()
        .split('\n')
        .filter((line) => line.includes('published 1,200/2,167')),
    ).toHaveLength(1);
  });

  it('prints only notes when progress is off', async () => {
    const { stream, text } = pipe();
    const progress = new Progress(false, stream, 20);
    progress.bar('published', 10).update(5);
    progress.note('steady: run lt-1');
    progress.stop();
    expect(text()).toBe('steady: run lt-1\n');
  });
});
