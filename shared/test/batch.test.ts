import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { processBatch } from '../src/app/batch.js';
import { TransientError } from '../src/domain/reasons.js';
import { sqsRecord } from './factories.js';
import { FakeClock, MemoryLastErrors } from './fakes.js';

const NOW = 1_900_000_000_000;

function setup() {
  const lastErrors = new MemoryLastErrors();
  const warnings: object[] = [];
  const logger = pino({ level: 'silent' });
  logger.warn = ((fields: object) => warnings.push(fields)) as typeof logger.warn;
  const failureLog = { lastErrors, fn: 'loading', clock: new FakeClock(NOW) };
  return { lastErrors, warnings, logger, failureLog };
}

describe('processBatch', () => {
  it('keeps the last error of each failed record by its message id, with the function, the time and the delivery', async () => {
    const { lastErrors, logger, failureLog } = setup();
    const records = [sqsRecord('ok', 'sqs-ok'), sqsRecord('bad', 'sqs-bad', 4)];
    const response = await processBatch(records, { logger, failureLog }, async (record) => {
      if (record.body === 'bad') throw new TransientError('DynamoDB BatchGetItem failed: throttled');
    });
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'sqs-bad' }]);
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

  it('still reports the failed records when their errors cannot be kept, and says so in the log', async () => {
    const { lastErrors, warnings, logger, failureLog } = setup();
    lastErrors.refuseWrites = true;
    const response = await processBatch([sqsRecord('x', 'sqs-1')], { logger, failureLog }, () => Promise.reject(new Error('boom')));
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'sqs-1' }]);
    expect(warnings).toEqual([expect.objectContaining({ messageIds: ['sqs-1'] })]);
  });

  it('writes nothing when every record succeeds', async () => {
    const { lastErrors, warnings, logger, failureLog } = setup();
    const response = await processBatch([sqsRecord('x', 'sqs-1')], { logger, failureLog }, async () => {});
    expect(response.batchItemFailures).toEqual([]);
    expect(lastErrors.errors.size).toBe(0);
    expect(warnings).toEqual([]);
  });
});
