import { TABLE_LAYOUT } from '@adhoc-scheduler/shared';
import type { CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ContextError, schedulerStackPropsFromContext } from '../../src/cdk/context.js';
import { SchedulerStack } from '../../src/cdk/scheduler-stack.js';
import { STACK_COUNTS } from '../../src/cdk/stack-counts.js';
import { cdkTestApp, joinedText, type Json } from './cdk-test-app.js';

// Unbundled stacks: these tests read alarms, the dashboard and resource counts, not the code.
let stack: SchedulerStack;
let template: Template;
let raised: Template;

beforeAll(() => {
  const app = cdkTestApp([]);
  stack = new SchedulerStack(app, 'AdhocScheduler');
  const raisedStack = new SchedulerStack(app, 'Raised', { scheduler: { monitoring: { accountConcurrencyQuota: 5000 } } });
  template = Template.fromStack(stack);
  raised = Template.fromStack(raisedStack);
});

const ref = (construct: IConstruct): string => stack.getLogicalId(construct.node.defaultChild as CfnElement);
const alarmsOf = (of: Template) => Object.values(of.findResources('AWS::CloudWatch::Alarm')).map((alarm) => alarm.Properties);
const alarmNamed = (of: Template, description: RegExp) => alarmsOf(of).find((alarm) => description.test(String(alarm.AlarmDescription)));

/** The table's writes and each index's, added up. */
const EVERY_WRITE_METRIC = ['table', ...TABLE_LAYOUT.indexes.map((_, index) => `index${index}`)].join(' + ');

describe('capacity alarms', () => {
  it('fire when the emitters hold 80% of the delay queue’s in-flight quota', () => {
    expect(alarmNamed(template, /delay-queue messages at once/)).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesNotVisible',
      Dimensions: [{ Name: 'QueueName', Value: stack.resolve(stack.scheduler.delayQueue.queue.queueName) }],
      Statistic: 'Maximum',
      Threshold: 96_000,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 1,
    });
  });

  it('fire at 80% of the account’s Lambda concurrency, the quota given once raised', () => {
    const expected = {
      Namespace: 'AWS/Lambda',
      MetricName: 'ConcurrentExecutions',
      Statistic: 'Maximum',
      ComparisonOperator: 'GreaterThanThreshold',
    };
    const accountAlarm = alarmNamed(template, /Lambda functions run over/);
    expect(accountAlarm).toMatchObject({ ...expected, Threshold: 800 });
    // The account's metric: no function named.
    expect(accountAlarm?.Dimensions).toBeUndefined();
    expect(alarmNamed(raised, /Lambda functions run over/)).toMatchObject({ ...expected, Threshold: 4000 });
  });

  it('fire when reads of the table, the registry’s among them, are throttled in 2 of 3 minutes', () => {
    expect(alarmNamed(template, /Reads of the table were throttled in 2 of the last 3 minutes/)).toMatchObject({
      Namespace: 'AWS/DynamoDB',
      MetricName: 'ReadThrottleEvents',
      Dimensions: [{ Name: 'TableName', Value: { Ref: ref(stack.scheduler.table) } }],
      Threshold: 0,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
    });
  });

  it('fire when writes to the table or its index are throttled in 2 of 3 minutes', () => {
    const throttles = alarmNamed(template, /Writes to the table or its index were throttled in 2 of the last 3 minutes/);
    expect(throttles).toMatchObject({
      Threshold: 0,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    const metrics = throttles?.Metrics as { Id: string; Expression?: string; MetricStat?: { Metric: Record<string, Json> } }[];
    expect(metrics.find((metric) => metric.Expression)?.Expression).toBe(EVERY_WRITE_METRIC);
    const dimensions = metrics
      .filter((metric) => metric.MetricStat)
      .map((metric) => {
        expect(metric.MetricStat?.Metric).toMatchObject({ Namespace: 'AWS/DynamoDB', MetricName: 'WriteThrottleEvents' });
        return metric.MetricStat?.Metric.Dimensions;
      });
    const table = { Name: 'TableName', Value: { Ref: ref(stack.scheduler.table) } };
    expect(dimensions).toEqual([
      [table],
      ...TABLE_LAYOUT.indexes.map((index) => [{ Name: 'GlobalSecondaryIndexName', Value: index.name }, table]),
    ]);
  });

  it('are on the dashboard beside their quotas', () => {
    const [dashboard] = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
    const body = joinedText(dashboard?.Properties.DashboardBody as Json);
    expect(body).toContain('ApproximateNumberOfMessagesNotVisible');
    expect(body).toContain('{"value":120000,"label":"SQS in-flight quota"');
    expect(body).toContain('ConcurrentExecutions');
    expect(body).toContain('ConsumedWriteCapacityUnits');
    expect(body).toContain(EVERY_WRITE_METRIC);
  });

  it('take the account’s concurrency quota from the context', () => {
    const props = (context: Record<string, unknown>) => schedulerStackPropsFromContext(cdkTestApp([], context).node);
    expect(props({ accountConcurrencyQuota: '3000' }).scheduler?.monitoring?.accountConcurrencyQuota).toBe(3000);
    expect(() => props({ accountConcurrencyQuota: 'many' })).toThrow(ContextError);
  });
});

describe('what tenants add to the stack (the capacity model’s STACK_COUNTS)', () => {
  it('is a topic, its policy and its subscription, and an output, each', () => {
    const app = cdkTestApp([]);
    const withTenants = (tenants: number) =>
      new SchedulerStack(app, `Tenants${tenants}`, {
        scheduler: { tenants: { tenants: Array.from({ length: tenants }, (_, i) => ({ id: `t${i}`, accounts: ['111111111111'] })) } },
      });
    const stacks = [withTenants(0), withTenants(2)];
    const counts = (of: SchedulerStack) => {
      const json = Template.fromStack(of).toJSON() as { Resources: object; Outputs: object };
      return { resources: Object.keys(json.Resources).length, outputs: Object.keys(json.Outputs).length };
    };
    const [alone, two] = stacks.map(counts);
    expect(alone).toEqual({ resources: STACK_COUNTS.resources, outputs: STACK_COUNTS.outputs });
    expect(two).toEqual({
      resources: STACK_COUNTS.resources + 2 * STACK_COUNTS.resourcesPerTenant,
      outputs: STACK_COUNTS.outputs + 2 * STACK_COUNTS.outputsPerTenant,
    });
  });
});
