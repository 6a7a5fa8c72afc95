import { describe, expect, it } from 'vitest';
import { timeOfCount } from '../src/scenarios/ingest-queue.js';

describe('acceptance seen through the ingest queue', () => {
  it('is the first look at which the count was reached', () => {
    const samples = [
      { at: 100, accepted: 0 },
      { at: 200, accepted: 40 },
      { at: 300, accepted: 100 },
    ];
    expect(timeOfCount(samples, 10)).toBe(200);
    expect(timeOfCount(samples, 100)).toBe(300);
    expect(timeOfCount(samples, 101)).toBeUndefined();
  });
});
