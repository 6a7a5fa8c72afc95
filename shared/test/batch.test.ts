import { describe, expect, it } from 'vitest';
import { processBatch } from '../src/app/batch.js';
import { TransientError } from '../src/domain/reasons.js';
import { sqsRecord } from './factories.js';
import { FakeClock, MemoryLastErrors, RecordingLogger } from './fakes.js';

const NOW = 1_900_000_000_000;

function setup() {
  const lastErrors = new MemoryLastErrors();
  const logger = new RecordingLogger();
  const failureLog = { lastErrors, fn: 'loading', clock: new FakeClock(NOW) };
  return { lastErrors, logger, failureLog };
}

describe('processBatch', () => {
  it('logs each failed record, and keeps its last error by its message id, with the function, the time and the delivery', async () => {
    const { lastErrors, logger, failureLog } = setup();
    const records = [sqsRecord('ok', 'sqs-ok'), sqsRecord('bad', 'sqs-bad', 4)];
    const failure = new TransientError('DynamoDB BatchGetItem failed: throttled');
    const response = await processBatch(records, { logger, failureLog }, async (record) => {
      if (record.body === 'bad') throw failure;
    });
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'sqs-bad' }]);
    // The line the emulator tests look for to see that no record failed.
    expect(logger.at('error')).toEqual([
      { level: 'error', fields: { err: failure, messageId: 'sqs-bad' }, message: 'record failed; it will be retried' },
    ]);
    expect([...lastErrors.errors.values()]).toEqual([
      {
        messageId: 'sqs-bad',
        fn: 'loading',
        error: { name: 'TransientError', message: 'DynamoDB BatchGetItem failed: throttled' },
        at: NOW,
        receiveCount: 4,
      },
    ]);
  });

  it('replaces an earlier error of the same message: what an operator sees is the last one', async () => {
    const { lastErrors, logger, failureLog } = setup();
    await processBatch([sqsRecord('x', 'sqs-1', 1)], { logger, failureLog }, () => Promise.reject(new Error('first')));
    await processBatch([sqsRecord('x', 'sqs-1', 2)], { logger, failureLog }, () => Promise.reject('second, not an Error'));
    expect(lastErrors.errors.get('sqs-1')).toMatchObject({ error: { name: 'Error', message: 'second, not an Error' }, receiveCount: 2 });
  });

  it('keeps the first 2,000 characters of a long error message', async () => {
    const { lastErrors, logger, failureLog } = setup();
    await processBatch([sqsRecord('x', 'sqs-1')], { logger, failureLog }, () => Promise.reject(new Error('x'.repeat(5000))));
    expect(lastErrors.errors.get('sqs-1')?.error.message).toBe('x'.repeat(2000));
  });

  it('still reports the failed records when their errors cannot be kept, and says so in the log', async () => {
    const { lastErrors, logger, failureLog } = setup();
    lastErrors.refuseWrites = true;
    const response = await processBatch([sqsRecord('x', 'sqs-1')], { logger, failureLog }, () => Promise.reject(new Error('boom')));
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'sqs-1' }]);
    expect(logger.at('warn')).toEqual([
      {
        level: 'warn',
        fields: expect.objectContaining({ messageIds: ['sqs-1'] }),
        message: 'could not keep the last error of failed records',
      },
    ]);
  });

  it('writes nothing when every record succeeds', async () => {
    const { lastErrors, logger, failureLog } = setup();
    const response = await processBatch([sqsRecord('x', 'sqs-1')], { logger, failureLog }, async () => {});
    expect(response.batchItemFailures).toEqual([]);
    expect(lastErrors.errors.size).toBe(0);
    expect(logger.at('warn')).toEqual([]);
  });
});
