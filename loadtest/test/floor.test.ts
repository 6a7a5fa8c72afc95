import { describe, expect, it } from 'vitest';
import { parseFloorCli } from '../src/floor.js';
import { LoadTestUsageError } from '../src/options.js';

describe('loadtest floor', () => {
  it('carries the spike of the article by default, in memory, with the scenarios’ consumer', () => {
    expect(parseFloorCli([])).toEqual({ events: 30_000, consumers: 8, dataDir: undefined });
  });

  it('takes the events, the consumer’s long polls and a data directory', () => {
    expect(parseFloorCli(['--events', '5000', '--consumers', '16', '--data-dir', '/tmp/d'])).toEqual({
      events: 5000,
      consumers: 16,
      dataDir: '/tmp/d',
    });
  });

  it('asks for help with --help, and refuses a count that is not a positive integer', () => {
    expect(parseFloorCli(['--help'])).toBeUndefined();
    expect(() => parseFloorCli(['--events', '0'])).toThrow(LoadTestUsageError);
    expect(() => parseFloorCli(['--consumers', '2.5'])).toThrow('--consumers must be an integer from 1 to 64, got "2.5"');
  });
});
