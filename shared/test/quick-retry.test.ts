import { describe, expect, it } from 'vitest';
import { QUICK_RETRY_PAUSES_MS, withQuickRetries } from '../src/app/quick-retry.js';
import { TransientError } from '../src/domain/reasons.js';
import { FakeClock } from './fakes.js';

describe('a step tried again at once', () => {
  it('is tried again after each pause while it fails for a reason a retry may fix, and its result kept', async () => {
    const clock = new FakeClock(0);
    const retried: string[] = [];
    let tries = 0;
    const result = await withQuickRetries(
      clock,
      async () => {
        tries += 1;
        if (tries <= QUICK_RETRY_PAUSES_MS.length) throw new TransientError(`try ${tries} failed`);
        return 'done';
      },
      (error) => retried.push(error.message),
    );
    expect(result).toBe('done');
    expect(clock.sleeps).toEqual([...QUICK_RETRY_PAUSES_MS]);
    expect(retried).toEqual(['try 1 failed', 'try 2 failed']);
  });

  it("gives up after its last try, with that try's error", async () => {
    const clock = new FakeClock(0);
    let tries = 0;
    const step = async (): Promise<never> => {
      tries += 1;
      throw new TransientError(`try ${tries} failed`);
    };
    await expect(withQuickRetries(clock, step, () => undefined)).rejects.toThrow(`try ${QUICK_RETRY_PAUSES_MS.length + 1} failed`);
    expect(tries).toBe(QUICK_RETRY_PAUSES_MS.length + 1);
  });

  it('is not tried again when it fails for good: any error but a TransientError is thrown at once', async () => {
    const clock = new FakeClock(0);
    let tries = 0;
    const step = async (): Promise<never> => {
      tries += 1;
      throw new TypeError('not a loading chunk');
    };
    await expect(withQuickRetries(clock, step, () => undefined)).rejects.toThrow('not a loading chunk');
    expect(tries).toBe(1);
    expect(clock.sleeps).toEqual([]);
  });
});
