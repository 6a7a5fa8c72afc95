/** Limits AWS sets, which the scheduler works within (and cannot configure away). */

/** Largest SNS message, body and attributes together; also the most one PublishBatch carries. */
export const SNS_MAX_MESSAGE_BYTES = 262_144;
/** Entries in one SNS PublishBatch. */
export const SNS_PUBLISH_BATCH_ENTRIES = 10;
/** Largest SQS message; also the most one SendMessageBatch carries, all its entries together. */
export const SQS_MAX_MESSAGE_BYTES = 1_048_576;
/** Longest SQS DelaySeconds; the loader hands out nothing due later than this. */
export const SQS_MAX_DELAY_SECONDS = 900;
/** Entries in one SQS SendMessageBatch, DeleteMessageBatch or ChangeMessageVisibilityBatch, and messages in one receive. */
export const SQS_BATCH_ENTRIES = 10;
/** Longest SQS keeps a message (its MessageRetentionPeriod at most): 14 days. */
export const SQS_MAX_RETENTION_SECONDS = 14 * 24 * 3600;
/** Longest an SQS receive waits for messages (its long poll). */
export const SQS_MAX_WAIT_SECONDS = 20;
/** Keys in one DynamoDB BatchGetItem. */
export const DYNAMODB_BATCH_GET_KEYS = 100;
/** Items in one DynamoDB BatchWriteItem. */
export const DYNAMODB_BATCH_WRITE_ITEMS = 25;
/** Statements in one DynamoDB (PartiQL) BatchExecuteStatement, each with its own condition. */
export const DYNAMODB_BATCH_STATEMENTS = 25;
/** Items in one DynamoDB TransactWriteItems. */
export const DYNAMODB_TRANSACTION_ITEMS = 100;
/** DynamoDB bills a write per started kilobyte of the whole item (before and after an update). */
export const DYNAMODB_WRITE_UNIT_BYTES = 1024;

/**
 * The most a tenant's `seriesOccurrencesPerMinute` may be (the registry schema's maximum says
 * the same): a take of one series makes at most this many late occurrences at once.
 */
export const MAX_SERIES_OCCURRENCES_PER_MINUTE = 100;
