import {
  ConfigError,
  DEFAULTS,
  deliveriesWithin,
  ENV,
  loadConfig,
  LOADER_CURSOR_ID,
  METRICS_NAMESPACE,
  REGISTRY_KEY,
  REGISTRY_LISTING,
  SQS_MAX_MESSAGE_BYTES,
  TABLE,
} from '@adhoc-scheduler/shared';
import { Aws, Stack, type CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import * as sns from 'aws-cdk-lib/aws-sns';
import { AdhocScheduler } from '../../src/cdk/adhoc-scheduler.js';
import { tenantTopicArnPattern } from '../../src/cdk/input-topics.js';
import { ContextError, schedulerStackPropsFromContext } from '../../src/cdk/context.js';
import { EVENT_SOURCES } from '../../src/queues.js';
import { SCHEDULER_FUNCTIONS, type SchedulerFunctionName } from '../../src/cdk/paths.js';
import { SCHEDULER_OUTPUTS, SchedulerStack } from '../../src/cdk/scheduler-stack.js';
import { queueOutputKeys } from '../../src/cdk/stack-outputs.js';
import { cdkTestApp, deployedEnvironment, DEPLOYED_ACCOUNT, joinedText, permissions, permissionsOf, type Json } from './cdk-test-app.js';

const ANY_TOPIC = `arn:${Aws.PARTITION}:sns:*:*:*`;

// One app for the whole file: the default stack is bundled once, the variants are not bundled.
let stack: SchedulerStack;
let template: Template;
let variant: SchedulerStack;
let variantTemplate: Template;

beforeAll(() => {
  const app = cdkTestApp(['AdhocScheduler']);
  stack = new SchedulerStack(app, 'AdhocScheduler');
  variant = new SchedulerStack(app, 'Variant', {
    scheduler: {
      publisherAccounts: ['111111111111', '222222222222'],
      publicIngestMaxConcurrency: 4,
      emitterMaxConcurrency: 50,
      emitterReservedConcurrency: 100,
      settings: { emitMaxAgeSeconds: 7200, shardCount: 16, logLevel: 'debug' },
      monitoring: { latenessAlarmThresholdMs: 250, loaderBacklogAlarmSeconds: 30 },
    },
  });
  template = Template.fromStack(stack);
  variantTemplate = Template.fromStack(variant);
});

const ref = (construct: IConstruct): string => stack.getLogicalId(construct.node.defaultChild as CfnElement);
const fn = (name: SchedulerFunctionName) => stack.scheduler.functions[name];
const functionResource = (name: SchedulerFunctionName) => template.toJSON().Resources[ref(fn(name).function)];

describe('the functions', () => {
  it('are the five handlers, each on Node 24 and arm64, beside the registry resource’s writer and its framework', () => {
    template.resourceCountIs('AWS::Lambda::Function', SCHEDULER_FUNCTIONS.length + 2);
    for (const name of SCHEDULER_FUNCTIONS) {
      const { Properties } = functionResource(name);
      expect(Properties.Runtime).toBe('nodejs24.x');
      expect(Properties.Architectures).toEqual(['arm64']);
      expect(Properties.Handler).toBe('index.handler');
    }
  });

  it('log JSON into their own log group, kept for a month and removed with the stack', () => {
    for (const name of SCHEDULER_FUNCTIONS) {
      const { Properties } = functionResource(name);
      expect(Properties.LoggingConfig).toEqual({ LogFormat: 'JSON', LogGroup: { Ref: ref(fn(name).logGroup) } });
      const logGroup = template.toJSON().Resources[ref(fn(name).logGroup)];
      expect(logGroup.Properties.RetentionInDays).toBe(30);
      expect(logGroup.DeletionPolicy).toBe('Delete');
    }
  });

  it('get the typed config as environment, readable by loadConfig, with metrics on and source maps enabled', () => {
    const resourceEnv = {
      [ENV.tableName]: { Ref: ref(stack.scheduler.table) },
      [ENV.delayQueueUrl]: { Ref: ref(stack.scheduler.delayQueue.queue) },
      [ENV.loadingQueueUrl]: { Ref: ref(stack.scheduler.loadingQueue.queue) },
      [ENV.changesQueueUrl]: { Ref: ref(stack.scheduler.bulkChanges.queue.queue) },
    };
    for (const name of SCHEDULER_FUNCTIONS) {
      const variables = functionResource(name).Properties.Environment.Variables as Record<string, Json>;
      expect(variables).toMatchObject({ ...resourceEnv, [ENV.metricsEnabled]: 'true', NODE_OPTIONS: '--enable-source-maps' });
      // Config variables only, never the region (Lambda sets it) or the emulator endpoints; settings at their default are left out.
      const configNames: string[] = Object.values(ENV).filter(
        (variable) => variable !== ENV.region && variable !== ENV.messagingEndpoint && variable !== ENV.dynamodbEndpoint,
      );
      expect(
        Object.keys(variables)
          .filter((variable) => variable !== 'NODE_OPTIONS')
          .every((variable) => configNames.includes(variable)),
      ).toBe(true);
      expect(variables[ENV.shardCount]).toBeUndefined();
      const config = loadConfig(deployedEnvironment(template, variables));
      expect(config).toMatchObject({
        metricsEnabled: true,
        shardCount: DEFAULTS.shardCount,
        emitMaxAgeSeconds: DEFAULTS.emitMaxAgeSeconds,
        dynamodbBatchWrites: 'statements',
      });
      // The input topics' prefix (the stack's name by default); the registry is the table's, never the environment's.
      expect(config).toMatchObject({ topicPrefix: 'AdhocScheduler', registryMaxAgeMs: DEFAULTS.registryMaxAgeMs });
      // The scheduler's own topics: the prefix-named ones of the stack's account, and the alarm topic by its ARN.
      expect(config).toMatchObject({
        accountId: DEPLOYED_ACCOUNT,
        ownTopicArns: [deployedEnvironment(template, { arn: stack.resolve(stack.alarmTopic.topicArn) as Json }).arn],
      });
    }
  });

  it('have timeouts that cover their work, and memory for it: the emitter mostly waits', () => {
    const limits = Object.fromEntries(
      SCHEDULER_FUNCTIONS.map((name) => [
        name,
        { timeout: functionResource(name).Properties.Timeout, memory: functionResource(name).Properties.MemorySize },
      ]),
    );
    expect(limits).toEqual({
      ingest: { timeout: 30, memory: 256 },
      loader: { timeout: DEFAULTS.loaderTickBudgetSeconds + 15, memory: 256 },
      loading: { timeout: 30, memory: 256 },
      emitter: { timeout: 30, memory: 128 },
      changes: { timeout: 60, memory: 256 },
    });
    // The emitter receives an event up to lead + 1 s early and waits for it.
    expect((functionResource('emitter').Properties.Timeout as number) * 1000).toBeGreaterThan(DEFAULTS.emitterLeadMs + 1000);
  });

  it('leave the emitter without a concurrency cap or reservation unless asked', () => {
    expect(functionResource('emitter').Properties.ReservedConcurrentExecutions).toBeUndefined();
    const emitterSource = template.findResources('AWS::Lambda::EventSourceMapping', {
      Properties: { FunctionName: { Ref: ref(fn('emitter').function) } },
    });
    expect(Object.values(emitterSource)[0]?.Properties.ScalingConfig).toBeUndefined();
  });
});

describe('the event sources', () => {
  const sourceOf = (name: SchedulerFunctionName) =>
    Object.values(
      template.findResources('AWS::Lambda::EventSourceMapping', { Properties: { FunctionName: { Ref: ref(fn(name).function) } } }),
    );

  it('feed ingest and the emitter in batches of up to 100 with a 1 s window, as the local runtime does, with partial batch failures', () => {
    const batches = (name: SchedulerFunctionName, queue: IQueue) => ({
      FunctionName: { Ref: ref(fn(name).function) },
      EventSourceArn: stack.resolve(queue.queueArn),
      BatchSize: EVENT_SOURCES[name === 'emitter' ? 'emitter' : 'ingest'].batchSize,
      MaximumBatchingWindowInSeconds: EVENT_SOURCES[name === 'emitter' ? 'emitter' : 'ingest'].batchingWindowSeconds,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    // Ingest has two sources: the registered tenants' queue, and the public tenant's, whose concurrency is capped.
    expect(sourceOf('ingest').map((source) => source.Properties)).toEqual([
      batches('ingest', stack.scheduler.ingestQueue.queue),
      { ...batches('ingest', stack.scheduler.publicIngestQueue.queue), ScalingConfig: { MaximumConcurrency: 10 } },
    ]);
    expect(sourceOf('emitter').map((source) => source.Properties)).toEqual([batches('emitter', stack.scheduler.delayQueue.queue)]);
    expect(EVENT_SOURCES.emitter).toEqual({ batchSize: 100, batchingWindowSeconds: 1 });
    // The emitter's batching window is inside its lead: events still reach it before they are due.
    expect(DEFAULTS.emitterLeadMs).toBeGreaterThan(EVENT_SOURCES.emitter.batchingWindowSeconds * 1000);
  });

  it('feed loading from the loading queue in batches of 10, without a batching window', () => {
    expect(sourceOf('loading').map((source) => source.Properties)).toEqual([
      {
        FunctionName: { Ref: ref(fn('loading').function) },
        EventSourceArn: stack.resolve(stack.scheduler.loadingQueue.queue.queueArn),
        BatchSize: 10,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      },
    ]);
  });

  it('refuse the transactional batch writes meant for DynamoDB Local', () => {
    const app = cdkTestApp(['Transactions']);
    expect(() => new SchedulerStack(app, 'Transactions', { scheduler: { settings: { dynamodbBatchWrites: 'transactions' } } })).toThrow(
      /local runtime/,
    );
  });

  it('run the loader every minute on an EventBridge rule, without retrying a failed tick', () => {
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 5);
    expect(sourceOf('loader')).toEqual([]);
    template.resourceCountIs('AWS::Events::Rule', 1);
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      Targets: [
        {
          Id: 'Target0',
          Arn: stack.resolve(fn('loader').function.functionArn),
          // A tick EventBridge cannot hand over is tried again within the minute, then set aside.
          RetryPolicy: { MaximumEventAgeInSeconds: 60 },
          DeadLetterConfig: { Arn: stack.resolve(stack.scheduler.loaderDeadLetterQueue.queueArn) },
        },
      ],
    });
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: ref(stack.scheduler.loaderDeadLetterQueue) }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'events.amazonaws.com' },
            Action: 'sqs:SendMessage',
            Condition: { ArnEquals: { 'aws:SourceArn': stack.resolve(stack.scheduler.loaderSchedule.ruleArn) } },
          }),
        ]),
      },
    });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      Principal: 'events.amazonaws.com',
      FunctionName: stack.resolve(fn('loader').function.functionArn),
      SourceArn: stack.resolve(stack.scheduler.loaderSchedule.ruleArn),
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: ref(fn('loader').function) },
      MaximumRetryAttempts: 0,
    });
  });
});

describe('the queues', () => {
  const queueProps = (construct: IConstruct) => template.toJSON().Resources[ref(construct)].Properties;

  it('each have a dead-letter queue with redrive; the delay queue keeps a message through a publish’s retries', () => {
    // Six queues with their dead-letter queues, and those of the input subscriptions and the loader's target.
    template.resourceCountIs('AWS::SQS::Queue', 12);
    const redrive = (queue: { queue: IConstruct; deadLetterQueue: IConstruct }) => queueProps(queue.queue).RedrivePolicy;
    const { publicIngestQueue, ingestQueue, loadingQueue, delayQueue, inputDeadLetterQueue, loaderDeadLetterQueue } = stack.scheduler;
    for (const queue of [publicIngestQueue, ingestQueue, loadingQueue, stack.scheduler.bulkChanges.queue]) {
      expect(redrive(queue)).toEqual({ deadLetterTargetArn: stack.resolve(queue.deadLetterQueue.queueArn), maxReceiveCount: 5 });
    }
    expect(redrive(delayQueue)).toEqual({
      deadLetterTargetArn: stack.resolve(delayQueue.deadLetterQueue.queueArn),
      maxReceiveCount: deliveriesWithin(DEFAULTS.emitMaxAgeSeconds) + 10,
    });
    const deadLetterQueues = [
      ...[publicIngestQueue, ingestQueue, loadingQueue, delayQueue, stack.scheduler.bulkChanges.queue].map(
        (queue) => queue.deadLetterQueue,
      ),
      inputDeadLetterQueue,
      loaderDeadLetterQueue,
    ];
    for (const deadLetterQueue of deadLetterQueues) {
      expect(queueProps(deadLetterQueue)).toEqual({
        MessageRetentionPeriod: 14 * 24 * 3600,
        SqsManagedSseEnabled: true,
        MaximumMessageSize: SQS_MAX_MESSAGE_BYTES,
      });
    }
  });

  it('hide a message for at least six times its consumer’s timeout (plus the batching window)', () => {
    const { publicIngestQueue, ingestQueue, loadingQueue, delayQueue } = stack.scheduler;
    const visibility = (queue: IConstruct) => queueProps(queue).VisibilityTimeout as number;
    const timeout = (name: SchedulerFunctionName) => functionResource(name).Properties.Timeout as number;
    expect(visibility(publicIngestQueue.queue)).toBe(6 * timeout('ingest') + 1);
    expect(visibility(ingestQueue.queue)).toBe(6 * timeout('ingest') + 1);
    expect(visibility(loadingQueue.queue)).toBe(6 * timeout('loading'));
    expect(visibility(delayQueue.queue)).toBe(6 * timeout('emitter') + 1);
    expect(visibility(stack.scheduler.bulkChanges.queue.queue)).toBe(6 * timeout('changes'));
  });

  it('are encrypted and refuse requests without TLS', () => {
    template.resourceCountIs('AWS::SQS::QueuePolicy', 12);
    template.resourceCountIs('AWS::SQS::Queue', 12);
    for (const queue of Object.values(template.findResources('AWS::SQS::Queue'))) expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
    for (const policy of Object.values(template.findResources('AWS::SQS::QueuePolicy'))) {
      expect(policy.Properties.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Action: 'sqs:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
    }
  });

  it('each take the largest message the senders size their batches to', () => {
    const queues = Object.values(template.findResources('AWS::SQS::Queue'));
    expect(queues).toHaveLength(12);
    for (const queue of queues) expect(queue.Properties.MaximumMessageSize).toBe(SQS_MAX_MESSAGE_BYTES);
  });
});

describe('the input topic', () => {
  const topicPolicy = (target: Template) => {
    const scheduler = target === template ? stack : variant;
    const policies = target.findResources('AWS::SNS::TopicPolicy', {
      Properties: { Topics: [scheduler.resolve(scheduler.scheduler.inputTopic.topicArn)] },
    });
    return Object.values(policies)[0]?.Properties.PolicyDocument.Statement;
  };

  it('is named <stack name>-input: ingest knows the public tenant by that name', () => {
    expect(template.toJSON().Resources[ref(stack.scheduler.inputTopic)].Properties.TopicName).toBe('AdhocScheduler-input');
    expect(stack.scheduler.tenantTopics).toEqual({});
  });

  it('takes schedule requests from any AWS account by default, over TLS only', () => {
    // The input topic's and the alarm topic's.
    template.resourceCountIs('AWS::SNS::TopicPolicy', 2);
    expect(topicPolicy(template)).toContainEqual({
      Sid: 'PublishScheduleRequests',
      Effect: 'Allow',
      Principal: { AWS: '*' },
      Action: 'sns:Publish',
      Resource: stack.resolve(stack.scheduler.inputTopic.topicArn),
    });
    expect(topicPolicy(template)).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
  });

  it('takes them only from the configured accounts when given a list', () => {
    expect(topicPolicy(variantTemplate)).toContainEqual({
      Sid: 'PublishScheduleRequests',
      Effect: 'Allow',
      Principal: {
        AWS: ['111111111111', '222222222222'].map((account) => ({
          'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:iam::${account}:root`]],
        })),
      },
      Action: 'sns:Publish',
      Resource: variant.resolve(variant.scheduler.inputTopic.topicArn),
    });
  });

  it('delivers to the public tenant’s own ingest queue with the SNS envelope (its TopicArn names the tenant, its MessageId events)', () => {
    template.resourceCountIs('AWS::SNS::Subscription', 1);
    const { inputTopic, publicIngestQueue, inputDeadLetterQueue } = stack.scheduler;
    const [subscription] = Object.values(template.findResources('AWS::SNS::Subscription'));
    expect(subscription?.Properties).toEqual({
      Protocol: 'sqs',
      RawMessageDelivery: false,
      TopicArn: stack.resolve(inputTopic.topicArn),
      Endpoint: stack.resolve(publicIngestQueue.queue.queueArn),
      RedrivePolicy: { deadLetterTargetArn: stack.resolve(inputDeadLetterQueue.queueArn) },
    });
    const admitted = (queue: IQueue, sid: string) =>
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: ref(queue) }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            {
              Sid: sid,
              Effect: 'Allow',
              Principal: { Service: 'sns.amazonaws.com' },
              Action: 'sqs:SendMessage',
              Resource: stack.resolve(queue.queueArn),
              Condition: { ArnLike: { 'aws:SourceArn': Match.arrayWith([stack.resolve(inputTopic.topicArn)]) } },
            },
          ]),
        },
      });
    admitted(publicIngestQueue.queue, 'InputTopicsDeliver');
    // What SNS cannot deliver there is set aside, not dropped.
    admitted(inputDeadLetterQueue, 'InputTopicsSetAside');
  });

  it('admits to the registered tenants’ ingest queue only topics named as a tenant’s, in its own account and region, and not the shared one', () => {
    const ingestPolicy = Object.values(
      template.findResources('AWS::SQS::QueuePolicy', { Properties: { Queues: [{ Ref: ref(stack.scheduler.ingestQueue.queue) }] } }),
    );
    const allowed = ingestPolicy[0]?.Properties.PolicyDocument.Statement.filter(
      (statement: Record<string, Json>) => statement.Effect === 'Allow',
    );
    expect(allowed).toEqual([
      expect.objectContaining({
        Principal: { Service: 'sns.amazonaws.com' },
        Condition: { ArnLike: { 'aws:SourceArn': [stack.resolve(tenantTopicArnPattern(stack.stackName))] } },
      }),
    ]);
    expect(tenantTopicArnPattern(stack.stackName)).toMatch(/:AdhocScheduler-tenant-\*$/);
  });
});

describe('the table', () => {
  const eventsTable = () => template.toJSON().Resources[stack.getLogicalId(stack.scheduler.table.node.defaultChild as CfnElement)];

  it('is on demand with point-in-time recovery, TTL on the expiry attribute, and retained on stack deletion', () => {
    expect(eventsTable()).toMatchObject({
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [{ AttributeName: TABLE.partitionKey, KeyType: 'HASH' }],
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
      },
    });
  });

  it('has one index, keys only: the tenant index, which no state change writes', () => {
    expect(eventsTable().Properties.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: TABLE.tenantIndex,
        KeySchema: [
          { AttributeName: TABLE.tenantShardKey, KeyType: 'HASH' },
          { AttributeName: TABLE.dueAtKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ]);
    expect(
      (eventsTable().Properties.AttributeDefinitions as Json[] | undefined)?.toSorted((a, b) =>
        JSON.stringify(a).localeCompare(JSON.stringify(b)),
      ),
    ).toEqual([
      { AttributeName: TABLE.dueAtKey, AttributeType: 'N' },
      { AttributeName: TABLE.partitionKey, AttributeType: 'S' },
      { AttributeName: TABLE.tenantShardKey, AttributeType: 'S' },
    ]);
  });

  it('has the registry’s listing beside it, named after it, on demand, with no index, retained as it is', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 2);
    const listing = template.toJSON().Resources[stack.getLogicalId(stack.scheduler.registry.listing.node.defaultChild as CfnElement)];
    expect(listing).toMatchObject({
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        TableName: {
          'Fn::Join': [
            '',
            [{ Ref: stack.getLogicalId(stack.scheduler.table.node.defaultChild as CfnElement) }, REGISTRY_LISTING.tableSuffix],
          ],
        },
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [
          { AttributeName: REGISTRY_LISTING.partitionKey, KeyType: 'HASH' },
          { AttributeName: REGISTRY_LISTING.sortKey, KeyType: 'RANGE' },
        ],
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      },
    });
    expect(listing.Properties.GlobalSecondaryIndexes).toBeUndefined();
  });
});

describe('IAM, per function', () => {
  const logs = (name: SchedulerFunctionName): [string[], string[]] => [
    ['logs:CreateLogStream', 'logs:PutLogEvents'],
    [fn(name).logGroup.logGroupArn],
  ];
  const consume = (queueArn: string): [string[], string[]] => [
    ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'],
    [queueArn],
  ];
  const roleOf = (name: SchedulerFunctionName) => ref(fn(name).role);
  // A failed record's last error, the item e#<messageId>, and no other item.
  const lastErrors = (): [string[], string[], Json] => [
    ['dynamodb:BatchWriteItem'],
    [stack.scheduler.table.tableArn],
    { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['e#*'] } },
  ];

  // The due directory's entries, #due#…, and no other item.
  const dueDirectory = (): [string[], string[], Json] => [
    ['dynamodb:BatchWriteItem'],
    [stack.scheduler.table.tableArn],
    { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['#due#*'] } },
  ];

  // The tenant registry's items, #registry…, read by key through each function's cache, and no other item.
  const registry = (): [string[], string[], Json] => [
    ['dynamodb:GetItem', 'dynamodb:BatchGetItem'],
    [stack.scheduler.table.tableArn],
    { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['#registry*'] } },
  ];

  const expected = (): Record<SchedulerFunctionName, string[]> => {
    const { table, publicIngestQueue, ingestQueue, loadingQueue, delayQueue, bulkChanges } = stack.scheduler;
    return {
      ingest: permissions(
        stack,
        logs('ingest'),
        consume(ingestQueue.queue.queueArn),
        consume(publicIngestQueue.queue.queueArn),
        // New events by batched conditional inserts, far-path payloads and label entries kept apart; quota counters, cancel (a
        // transaction of two UpdateItems), reschedule and resends by UpdateItem; records read back after a
        // duplicate or a refused change.
        [['dynamodb:PartiQLInsert', 'dynamodb:BatchWriteItem', 'dynamodb:UpdateItem', 'dynamodb:BatchGetItem'], [table.tableArn]],
        // Near events, and notices about rejected requests for the emitter to publish.
        [['sqs:SendMessage'], [delayQueue.queue.queueArn]],
        // A cancel by label's first page (its job's item is an UpdateItem), a resume's job.
        [['sqs:SendMessage'], [bulkChanges.queue.queue.queueArn]],
        lastErrors(),
        registry(),
      ),
      loader: permissions(
        stack,
        logs('loader'),
        [['dynamodb:Query'], [`${table.tableArn}/index/${TABLE.tenantIndex}`]],
        // Its cursor, and no other item.
        [
          ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
          [table.tableArn],
          { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [LOADER_CURSOR_ID] } },
        ],
        // Tenants' pauses, read from their quota counters' items only, where their pause marks are cleared (and backfilled).
        [
          ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem'],
          [table.tableArn],
          { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['#tenant#*'] } },
        ],
        // The due directory's backfill: a scan of the table, page by page, once.
        [['dynamodb:Scan'], [table.tableArn]],
        [['sqs:SendMessage'], [loadingQueue.queue.queueArn]],
        registry(),
        dueDirectory(),
      ),
      loading: permissions(
        stack,
        logs('loading'),
        consume(loadingQueue.queue.queueArn),
        // A chunk's records and payloads read together, taken by batched conditional updates; its
        // series taken: occurrences created, counted and requeued, label entries and the due
        // directory written, the series advanced or ended.
        [
          ['dynamodb:BatchGetItem', 'dynamodb:PartiQLUpdate', 'dynamodb:PartiQLInsert', 'dynamodb:UpdateItem', 'dynamodb:BatchWriteItem'],
          [table.tableArn],
        ],
        [['sqs:SendMessage'], [delayQueue.queue.queueArn]],
        lastErrors(),
        registry(),
      ),
      emitter: permissions(
        stack,
        logs('emitter'),
        consume(delayQueue.queue.queueArn),
        // A batch's records and pauses read before the due time; its ends by batched conditional updates; notices
        // claimed by batched conditional inserts and marked sent by updates (claimed again by UpdateItem), counters and
        // carries by UpdateItem; a hold checks its tenant's pause; a carry into the table writes a payload item.
        [
          [
            'dynamodb:BatchGetItem',
            'dynamodb:PartiQLUpdate',
            'dynamodb:PartiQLInsert',
            'dynamodb:UpdateItem',
            'dynamodb:ConditionCheckItem',
            'dynamodb:BatchWriteItem',
          ],
          [table.tableArn],
        ],
        // Retries put off, and ends it could not record handed over, on its own queue.
        [['sqs:ChangeMessageVisibility', 'sqs:SendMessage'], [delayQueue.queue.queueArn]],
        lastErrors(),
        registry(),
        // Clients' topics outside the scheduler's account; inside it, only where a topic's own policy grants the role.
        [['sns:Publish'], [ANY_TOPIC], { StringNotEquals: { 'aws:ResourceAccount': { Ref: 'AWS::AccountId' } } }],
        // Never the scheduler's own topics (<topicPrefix>-..., the alarm topic among them), whatever their policies say.
        [['sns:Publish'], [`arn:${Aws.PARTITION}:sns:*:${Aws.ACCOUNT_ID}:AdhocScheduler-*`, stack.alarmTopic.topicArn], undefined, 'Deny'],
      ),
      changes: permissions(
        stack,
        logs('changes'),
        consume(bulkChanges.queue.queue.queueArn),
        // A page's label entries, and a resume's held events, from the tenant index.
        [['dynamodb:Query'], [`${table.tableArn}/index/${TABLE.tenantIndex}`]],
        // The job and a page's records read; each cancel (a transaction of two UpdateItems) and the job's step written.
        [['dynamodb:BatchGetItem', 'dynamodb:UpdateItem'], [table.tableArn]],
        // The next page; the job's notice, for the emitter to publish; a resume's held events, to loading.
        [['sqs:SendMessage'], [bulkChanges.queue.queue.queueArn, delayQueue.queue.queueArn, loadingQueue.queue.queueArn]],
        // A series cancelled by label drops its payload item.
        [['dynamodb:BatchWriteItem'], [table.tableArn], { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['p#s-*'] } }],
        lastErrors(),
        registry(),
      ),
    };
  };

  it.each(SCHEDULER_FUNCTIONS)('%s gets exactly the actions and resources its code uses', (name) => {
    expect(permissionsOf(template, roleOf(name))).toEqual(expected()[name]);
  });

  it('gives the registry resource’s writer the registry’s items, the index and the table it lists them in, and nothing else', () => {
    const { table, registry } = stack.scheduler;
    const { writer } = registry;
    expect(permissionsOf(template, ref(writer.role))).toEqual(
      permissions(
        stack,
        [['logs:CreateLogStream', 'logs:PutLogEvents'], [writer.logGroup.logGroupArn]],
        [
          ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem'],
          [table.tableArn],
          { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['#registry*'] } },
        ],
        [['dynamodb:Query'], [`${table.tableArn}/index/${TABLE.tenantIndex}`]],
        [
          ['dynamodb:BatchWriteItem'],
          [registry.listing.tableArn],
          { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [REGISTRY_KEY] } },
        ],
      ),
    );
  });

  it('gives each function its own role, assumable by Lambda only, with no managed or inline policies', () => {
    // The five's, the registry writer's, and the custom resources' framework's (see TenantRegistryResource).
    template.resourceCountIs('AWS::IAM::Role', SCHEDULER_FUNCTIONS.length + 2);
    template.resourceCountIs('AWS::IAM::Policy', SCHEDULER_FUNCTIONS.length + 2);
    for (const name of SCHEDULER_FUNCTIONS) {
      const role = template.toJSON().Resources[roleOf(name)];
      expect(functionResource(name).Properties.Role).toEqual({ 'Fn::GetAtt': [roleOf(name), 'Arn'] });
      expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
        { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
      ]);
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      expect(role.Properties.Policies).toBeUndefined();
    }
  });

  it('lets only the emitter publish to clients’ topics', () => {
    const publishers = SCHEDULER_FUNCTIONS.filter((name) =>
      permissionsOf(template, roleOf(name)).some((permission) => permission.startsWith('sns:')),
    );
    expect(publishers).toEqual(['emitter']);
  });

  it('lets the emitter publish to other accounts’ topics, and never to the scheduler’s own, whatever a topic policy grants', () => {
    const [policy] = Object.values(template.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: roleOf('emitter') }] } }));
    const statements = (policy?.Properties.PolicyDocument.Statement as Record<string, Json>[] | undefined)?.filter((statement) =>
      JSON.stringify(statement.Action).includes('sns:'),
    );
    expect(statements).toEqual([
      {
        Effect: 'Allow',
        Action: 'sns:Publish',
        Resource: stack.resolve(ANY_TOPIC),
        // In the scheduler's account, an identity policy alone would reach every topic, its input topics included.
        Condition: { StringNotEquals: { 'aws:ResourceAccount': { Ref: 'AWS::AccountId' } } },
      },
      {
        Effect: 'Deny',
        Action: 'sns:Publish',
        Resource: [
          { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':sns:*:', { Ref: 'AWS::AccountId' }, ':AdhocScheduler-*']] },
          { Ref: ref(stack.alarmTopic) },
        ],
      },
    ]);
    // Every topic the stack creates is named with the prefix the Deny names.
    const topicNames = Object.values(template.findResources('AWS::SNS::Topic')).map((topic) => topic.Properties.TopicName as string);
    expect(topicNames.sort()).toEqual(['AdhocScheduler-alarms', 'AdhocScheduler-input']);
  });

  it('denies an embedding app’s alarm topic too, whatever its name', () => {
    const embedding = new Stack(cdkTestApp([]), 'Embedding');
    const operations = new sns.Topic(embedding, 'Operations', { topicName: 'operations-alarms', enforceSSL: true });
    const scheduler = new AdhocScheduler(embedding, 'Scheduler', { topicPrefix: 'jobs', monitoring: { alarmTopic: operations } });
    const denied = Object.values(Template.fromStack(embedding).findResources('AWS::IAM::Policy'))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Record<string, Json>[])
      .filter((statement) => statement.Effect === 'Deny');
    expect(denied).toEqual([
      {
        Effect: 'Deny',
        Action: 'sns:Publish',
        Resource: [embedding.resolve(`arn:${Aws.PARTITION}:sns:*:${Aws.ACCOUNT_ID}:jobs-*`), embedding.resolve(operations.topicArn)],
      },
    ]);
    expect(scheduler.monitoring.alarms).toHaveLength(23);
  });

  it('names only the role clients grant publishing to: <stack>-emitter-<region>', () => {
    const roleName = (name: SchedulerFunctionName) => template.toJSON().Resources[roleOf(name)].Properties.RoleName;
    expect(roleName('emitter')).toEqual({ 'Fn::Join': ['', ['AdhocScheduler-emitter-', { Ref: 'AWS::Region' }]] });
    for (const name of ['ingest', 'loader', 'loading'] as const) expect(roleName(name)).toBeUndefined();
  });

  it('refuses a stack name too long for that role name in every region', () => {
    const unbundled = cdkTestApp([]);
    // 64 characters at most: the name, "-emitter-" and the longest region name (14).
    expect(() => new SchedulerStack(unbundled, 'S'.repeat(41))).not.toThrow();
    expect(() => new SchedulerStack(unbundled, 'L'.repeat(42))).toThrow(/too long for the role name/);
  });
});

describe('alarms', () => {
  const alarms = () => Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((alarm) => alarm.Properties);
  const alarmTopic = () => ({ Ref: ref(stack.alarmTopic) });

  it('are twenty-three, and each notifies the alarm topic', () => {
    expect(alarms()).toHaveLength(23);
    for (const alarm of alarms()) expect(alarm.AlarmActions).toEqual([alarmTopic()]);
  });

  it('go to a topic named like the scheduler’s own, that takes publishes over TLS only, from this account’s alarms', () => {
    const topic = template.toJSON().Resources[ref(stack.alarmTopic)];
    expect(topic.Properties.TopicName).toBe('AdhocScheduler-alarms');
    const [policy] = Object.values(template.findResources('AWS::SNS::TopicPolicy', { Properties: { Topics: [alarmTopic()] } }));
    expect(policy?.Properties.PolicyDocument.Statement).toEqual([
      {
        Sid: 'AllowPublishThroughSSLOnly',
        Effect: 'Deny',
        Principal: '*',
        Action: 'sns:Publish',
        Resource: alarmTopic(),
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      },
      // The policy replaces the account's default one, which let the account's alarms publish.
      {
        Sid: 'AlarmsPublish',
        Effect: 'Allow',
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: 'sns:Publish',
        Resource: alarmTopic(),
        Condition: {
          StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
          ArnLike: {
            'aws:SourceArn': {
              'Fn::Join': [
                '',
                ['arn:', { Ref: 'AWS::Partition' }, ':cloudwatch:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':alarm:*'],
              ],
            },
          },
        },
      },
    ]);
  });

  it('fire when any dead-letter queue holds a message', () => {
    const { publicIngestQueue, ingestQueue, loadingQueue, delayQueue, inputDeadLetterQueue, loaderDeadLetterQueue, bulkChanges } =
      stack.scheduler;
    const deadLetterQueues = [
      ...[publicIngestQueue, ingestQueue, loadingQueue, delayQueue, bulkChanges.queue].map((queue) => queue.deadLetterQueue),
      inputDeadLetterQueue,
      loaderDeadLetterQueue,
    ];
    for (const queue of deadLetterQueues) {
      expect(alarms()).toContainEqual(
        expect.objectContaining({
          Namespace: 'AWS/SQS',
          MetricName: 'ApproximateNumberOfMessagesVisible',
          Dimensions: [{ Name: 'QueueName', Value: stack.resolve(queue.queueName) }],
          Statistic: 'Maximum',
          ComparisonOperator: 'GreaterThanThreshold',
          Threshold: 0,
          EvaluationPeriods: 1,
        }),
      );
    }
  });

  it('fire when the p99 of emit lateness stays over the threshold', () => {
    expect(alarms()).toContainEqual(
      expect.objectContaining({
        Namespace: METRICS_NAMESPACE,
        MetricName: 'EmitLatenessMs',
        Dimensions: [{ Name: 'service', Value: 'emitter' }],
        ExtendedStatistic: 'p99',
        Threshold: 1000,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 5,
        DatapointsToAlarm: 3,
      }),
    );
    const variantLateness = Object.values(variantTemplate.findResources('AWS::CloudWatch::Alarm')).find(
      (alarm) => alarm.Properties.MetricName === 'EmitLatenessMs',
    );
    expect(variantLateness?.Properties.Threshold).toBe(250);
  });

  it('fire on any function error or throttle', () => {
    for (const name of SCHEDULER_FUNCTIONS) {
      for (const metric of ['Errors', 'Throttles']) {
        expect(alarms()).toContainEqual(
          expect.objectContaining({
            Namespace: 'AWS/Lambda',
            MetricName: metric,
            Dimensions: [{ Name: 'FunctionName', Value: { Ref: ref(fn(name).function) } }],
            Statistic: 'Sum',
            Threshold: 0,
            ComparisonOperator: 'GreaterThanThreshold',
          }),
        );
      }
    }
  });

  it('fire when the loader falls behind for three ticks, and report a loader that stopped reporting', () => {
    expect(alarms()).toContainEqual(
      expect.objectContaining({
        Namespace: METRICS_NAMESPACE,
        MetricName: 'LoaderBacklogSeconds',
        Dimensions: [{ Name: 'service', Value: 'loader' }],
        Statistic: 'Maximum',
        Threshold: 0,
        EvaluationPeriods: 3,
        TreatMissingData: 'missing',
        InsufficientDataActions: [alarmTopic()],
      }),
    );
    const variantBacklog = Object.values(variantTemplate.findResources('AWS::CloudWatch::Alarm')).find(
      (alarm) => alarm.Properties.MetricName === 'LoaderBacklogSeconds',
    );
    expect(variantBacklog?.Properties.Threshold).toBe(30);
  });
});

describe('the dashboard', () => {
  interface Widget {
    readonly width: number;
    readonly properties: { readonly title: string; readonly metrics: (string | Record<string, string | number>)[][] };
  }
  const widgets = (): Widget[] => {
    const [dashboard] = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
    return (JSON.parse(joinedText(dashboard?.Properties.DashboardBody as Json)) as { widgets: Widget[] }).widgets;
  };
  const widget = (title: string) => widgets().find((candidate) => candidate.properties.title.startsWith(title));

  it('shows emit lateness at p50, p90, p99 and max', () => {
    const stats = widget('Emit lateness')?.properties.metrics.map((line) => {
      expect(line.slice(0, 4)).toEqual([METRICS_NAMESPACE, 'EmitLatenessMs', 'service', 'emitter']);
      return (line.at(-1) as { stat: string }).stat;
    });
    expect(stats).toEqual(['p50', 'p90', 'p99', 'Maximum']);
  });

  it('shows throughput through every stage', () => {
    const lines = widget('Throughput')?.properties.metrics.map((line) => line.slice(0, 4).join(' '));
    expect(lines).toEqual([
      `${METRICS_NAMESPACE} EventsIngested service ingest`,
      `${METRICS_NAMESPACE} EventsStored service ingest`,
      `${METRICS_NAMESPACE} EventsDelayed service ingest`,
      `${METRICS_NAMESPACE} EventsLoaded service loader`,
      `${METRICS_NAMESPACE} EventsDelayed service loading`,
      `${METRICS_NAMESPACE} EventsEmitted service emitter`,
    ]);
  });

  it('shows failures by reason, dead letters, errors and the loader backlog', () => {
    expect(JSON.stringify(widget('Failures by function and reason'))).toContain(
      `SEARCH('{${METRICS_NAMESPACE},reason,service} MetricName=\\"EventsFailed\\"', 'Sum', 60)`,
    );
    expect(widget('Dead-letter queues')?.properties.metrics).toHaveLength(7);
    expect(widget('Function errors and throttles')?.properties.metrics).toHaveLength(10);
    expect(JSON.stringify(widget('Loader backlog'))).toContain('LoaderBacklogSeconds');
  });

  it('shows cancels, reschedules, the stale deliveries they leave, and refused requests by reason', () => {
    const lines = widget('Cancels and reschedules')?.properties.metrics.map((line) => line.slice(0, 4).join(' '));
    expect(lines).toEqual([
      `${METRICS_NAMESPACE} EventsCancelled service ingest`,
      `${METRICS_NAMESPACE} EventsRescheduled service ingest`,
      `${METRICS_NAMESPACE} StaleMessagesDropped service emitter`,
    ]);
    expect(JSON.stringify(widget('Refused requests by reason'))).toContain(
      `SEARCH('{${METRICS_NAMESPACE},reason,service} MetricName=\\"EventsRejected\\"', 'Sum', 60)`,
    );
  });

  it('shows what waits in each ingest queue, so a flood on the shared topic shows as the public queue’s backlog', () => {
    const lines = widget('Ingest queues')?.properties.metrics.map((line) => line.slice(0, 4).join(' '));
    const queueName = (queue: IQueue) => joinedText(stack.resolve(queue.queueName) as Json);
    const { publicIngestQueue, ingestQueue } = stack.scheduler;
    expect(lines).toEqual([
      `AWS/SQS ApproximateNumberOfMessagesVisible QueueName ${queueName(publicIngestQueue.queue)}`,
      `AWS/SQS ApproximateNumberOfMessagesVisible QueueName ${queueName(ingestQueue.queue)}`,
      `AWS/SQS ApproximateAgeOfOldestMessage QueueName ${queueName(publicIngestQueue.queue)}`,
      `AWS/SQS ApproximateAgeOfOldestMessage QueueName ${queueName(ingestQueue.queue)}`,
    ]);
  });

  it('lays its widgets out in rows of two, the ingest queues on a row of their own', () => {
    expect(widgets().map((candidate) => candidate.width)).toEqual([...Array(8).fill(12), 24, 12, 12, 12, 12]);
  });
});

describe('the outputs', () => {
  it('give the quickstart what it needs: input topic, emitter role, region, near-path window', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: Json }>;
    const queueOutputs = [...stack.redrivableQueues.keys()].flatMap((source) => Object.values(queueOutputKeys(source)));
    expect(Object.keys(outputs).sort()).toEqual([...new Set([...Object.values(SCHEDULER_OUTPUTS), ...queueOutputs])].sort());
    expect(outputs[SCHEDULER_OUTPUTS.inputTopicArn]?.Value).toEqual(stack.resolve(stack.scheduler.inputTopic.topicArn));
    expect(outputs[SCHEDULER_OUTPUTS.emitterRoleArn]?.Value).toEqual(stack.resolve(fn('emitter').role.roleArn));
    expect(outputs[SCHEDULER_OUTPUTS.region]?.Value).toEqual({ Ref: 'AWS::Region' });
    expect(outputs[SCHEDULER_OUTPUTS.nearPathWindowSeconds]?.Value).toBe(String(DEFAULTS.nearPathWindowSeconds));
    expect(outputs[SCHEDULER_OUTPUTS.shardCount]?.Value).toBe(String(DEFAULTS.shardCount));
    expect(outputs[SCHEDULER_OUTPUTS.tableName]?.Value).toEqual({ Ref: ref(stack.scheduler.table) });
    expect(outputs[SCHEDULER_OUTPUTS.alarmTopicArn]?.Value).toEqual({ Ref: ref(stack.alarmTopic) });
  });

  it("give the dead-letter tools each queue's URL and its dead-letter queue's: every queue a function consumes", () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: Json }>;
    const { ingestQueue, publicIngestQueue, loadingQueue, delayQueue, bulkChanges } = stack.scheduler;
    expect([...stack.redrivableQueues.values()]).toEqual([ingestQueue, publicIngestQueue, loadingQueue, delayQueue, bulkChanges.queue]);
    for (const [source, { queue, deadLetterQueue }] of stack.redrivableQueues) {
      const keys = queueOutputKeys(source);
      expect(outputs[keys.queueUrl]?.Value).toEqual({ Ref: ref(queue) });
      expect(outputs[keys.deadLetterQueueUrl]?.Value).toEqual({ Ref: ref(deadLetterQueue) });
    }
    expect(queueOutputKeys('public-ingest')).toEqual({
      queueUrl: 'PublicIngestQueueUrl',
      deadLetterQueueUrl: 'PublicIngestDeadLetterQueueUrl',
    });
  });
});

describe('settings', () => {
  const variantFunction = (name: SchedulerFunctionName) =>
    variantTemplate.toJSON().Resources[variant.getLogicalId(variant.scheduler.functions[name].function.node.defaultChild as CfnElement)];

  it('reach every function through the config module, and shape the delay queue’s redrive', () => {
    for (const name of SCHEDULER_FUNCTIONS) {
      expect(variantFunction(name).Properties.Environment.Variables).toMatchObject({
        [ENV.emitMaxAgeSeconds]: '7200',
        [ENV.shardCount]: '16',
        [ENV.logLevel]: 'debug',
      });
    }
    const delayQueue =
      variantTemplate.toJSON().Resources[variant.getLogicalId(variant.scheduler.delayQueue.queue.node.defaultChild as CfnElement)];
    expect(delayQueue.Properties.RedrivePolicy.maxReceiveCount).toBe(deliveriesWithin(7200) + 10);
  });

  it('cap the public tenant’s ingest concurrency as given', () => {
    variantTemplate.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: variant.resolve(variant.scheduler.publicIngestQueue.queue.queueArn),
      ScalingConfig: { MaximumConcurrency: 4 },
    });
    const unbundled = cdkTestApp([]);
    expect(() => new SchedulerStack(unbundled, 'OneAtATime', { scheduler: { publicIngestMaxConcurrency: 1 } })).toThrow(
      /between 2 and 1000/,
    );
  });

  it('cap and reserve the emitter’s concurrency when given', () => {
    expect(variantFunction('emitter').Properties.ReservedConcurrentExecutions).toBe(100);
    variantTemplate.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: variant.resolve(variant.scheduler.delayQueue.queue.queueArn),
      ScalingConfig: { MaximumConcurrency: 50 },
    });
  });

  it('are refused at synth time when the functions would refuse them', () => {
    const unbundled = cdkTestApp([]);
    const attempt = (id: string, scheduler: ConstructorParameters<typeof SchedulerStack>[2]) => () =>
      new SchedulerStack(unbundled, id, scheduler);
    expect(attempt('NoShards', { scheduler: { settings: { shardCount: 0 } } })).toThrow(ConfigError);
    expect(attempt('LateLoader', { scheduler: { settings: { loaderLookaheadSeconds: 590 } } })).toThrow(ConfigError);
    expect(attempt('Seconds', { scheduler: { settings: { loaderIntervalSeconds: 90, nearPathWindowSeconds: 900 } } })).toThrow(
      /whole number of minutes/,
    );
    expect(attempt('EarlyCutoff', { scheduler: { settings: { changeCutoffSeconds: 2 } } })).toThrow(ConfigError);
    expect(attempt('BadAccount', { scheduler: { publisherAccounts: ['12345'] } })).toThrow(/12-digit/);
    expect(attempt('NoAccount', { scheduler: { publisherAccounts: [] } })).toThrow(/empty/);
    expect(attempt('OverReserved', { scheduler: { emitterMaxConcurrency: 20, emitterReservedConcurrency: 10 } })).toThrow(
      /must not exceed/,
    );
  });
});

describe('CDK context', () => {
  const propsFrom = (context: Record<string, unknown>) => schedulerStackPropsFromContext(cdkTestApp([], context).node);

  it('configures the stack from -c values (strings) and cdk.json values', () => {
    const props = propsFrom({
      publisherAccounts: '111111111111, 222222222222',
      publicIngestMaxConcurrency: '20',
      emitterMaxConcurrency: '40',
      emitterReservedConcurrency: 80,
      latenessAlarmThresholdMs: '500',
      logRetentionDays: '14',
      tableRemovalPolicy: 'destroy',
      shardCount: '32',
      logLevel: 'warn',
    });
    expect(props.scheduler).toMatchObject({
      publisherAccounts: ['111111111111', '222222222222'],
      publicIngestMaxConcurrency: 20,
      emitterMaxConcurrency: 40,
      emitterReservedConcurrency: 80,
      logRetention: 14,
      tableRemovalPolicy: 'destroy',
      settings: { shardCount: 32, logLevel: 'warn' },
      monitoring: { latenessAlarmThresholdMs: 500 },
    });
    expect(propsFrom({ publisherAccounts: '["111111111111"]' }).scheduler?.publisherAccounts).toEqual(['111111111111']);
    expect(propsFrom({}).scheduler).toMatchObject({ publisherAccounts: undefined, settings: {} });
  });

  it('refuses values it cannot read, naming the key', () => {
    expect(() => propsFrom({ shardCount: 'many' })).toThrow(new ContextError('context "shardCount" must be an integer, got "many"'));
    expect(() => propsFrom({ tableRemovalPolicy: 'keep' })).toThrow(ContextError);
    expect(() => propsFrom({ logRetentionDays: '10' })).toThrow(/logRetentionDays/);
    expect(() => propsFrom({ publisherAccounts: 42 })).toThrow(/publisherAccounts/);
  });
});
