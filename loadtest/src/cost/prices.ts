/**
 * AWS list prices, us-east-1, on-demand, without free tiers, in US dollars. Read from the AWS
 * pricing pages below as of the date given; re-check them before relying on the numbers.
 */
export const PRICES = {
  asOf: '2026-11-22',
  region: 'us-east-1',
  sns: {
    source: 'https://aws.amazon.com/sns/pricing/',
    /** Publish and PublishBatch requests, each 64 KiB chunk a request; deliveries to SQS are free. */
    perMillionRequests: 0.5,
  },
  sqs: {
    source: 'https://aws.amazon.com/sqs/pricing/',
    /** Standard queues, first 100 billion requests a month; each 64 KiB chunk a request. */
    perMillionRequests: 0.4,
  },
  dynamodb: {
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
    /** On-demand, Standard table class (halved on 2024-11-01). */
    perMillionWriteUnits: 0.625,
    perMillionReadUnits: 0.125,
    /** Storage, Standard table class, beyond the first 25 GB; point-in-time recovery, by the table's size. */
    perGbMonthStorage: 0.25,
    perGbMonthPointInTimeRecovery: 0.2,
  },
  lambda: {
    source: 'https://aws.amazon.com/lambda/pricing/',
    perMillionRequests: 0.2,
    /** Arm64 (the CDK app's architecture), first 7.5 billion GB-seconds a month. */
    perGbSecondArm64: 0.0000133334,
  },
  eventBridgeScheduler: {
    source: 'https://aws.amazon.com/eventbridge/pricing/',
    /** Scheduled invocations; the target's own cost (here an SNS publish) comes on top. */
    perMillionInvocations: 1.0,
  },
} as const;
