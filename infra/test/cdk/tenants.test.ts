import { REGISTRY_PROPERTY } from '@adhoc-scheduler/functions';
import { ENV, PUBLIC_TENANT_ID, tenantOfInputTopicName, TenantsDocumentError, type TenantsDocument } from '@adhoc-scheduler/shared';
import { Aws, Fn, Stack, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { IConstruct } from 'constructs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdhocScheduler } from '../../src/cdk/adhoc-scheduler.js';
import { ContextError, schedulerStackPropsFromContext } from '../../src/cdk/context.js';
import { estimatedEnvironmentBytes, TOKEN_ESTIMATE_BYTES } from '../../src/cdk/lambda-environment.js';
import { SCHEDULER_FUNCTIONS } from '../../src/cdk/paths.js';
import { SCHEDULER_OUTPUTS, SchedulerStack, tenantInputTopicOutputKey, type SchedulerStackProps } from '../../src/cdk/scheduler-stack.js';
import { queueOutputKeys } from '../../src/cdk/stack-outputs.js';
import { cdkTestApp, type Json } from './cdk-test-app.js';
import { tenantTopicPolicy } from '../../src/tenant-topic-policy.js';
import { STACK_TENANT_TOPIC_TAG } from '../../src/cdk/stack-outputs.js';

const TENANTS = {
  public: { targetAccounts: ['999999999999'], maxOpenEvents: 1000 },
  tenants: [
    { id: 'acme-corp', accounts: ['111111111111'] },
    {
      id: 'globex',
      accounts: ['222222222222', '333333333333'],
      targetAccounts: ['444444444444'],
      maxOpenEvents: 10,
      maxIngestPerSecond: 5,
    },
  ],
} as const satisfies TenantsDocument;

// Nothing is bundled here: these tests read the template only.
let stack: SchedulerStack;
let template: Template;

beforeAll(() => {
  stack = new SchedulerStack(cdkTestApp([]), 'Tenants', { scheduler: { tenants: TENANTS } });
  template = Template.fromStack(stack);
});

const ref = (construct: IConstruct): string => stack.getLogicalId(construct.node.defaultChild as CfnElement);
const resource = (construct: IConstruct) => template.toJSON().Resources[ref(construct)];
const tenantTopic = (id: string): sns.Topic => {
  const topic = stack.scheduler.tenantTopics[id];
  if (topic === undefined) throw new Error(`no topic for tenant ${id}`);
  return topic;
};
/** Every input topic with the tenant it belongs to. */
const inputTopics = (): [string, sns.Topic][] => [
  [PUBLIC_TENANT_ID, stack.scheduler.inputTopic],
  ...TENANTS.tenants.map(({ id }): [string, sns.Topic] => [id, tenantTopic(id)]),
];
const policyStatementsOf = (topic: sns.Topic): Record<string, Json>[] => {
  const policies = Object.values(template.findResources('AWS::SNS::TopicPolicy')).filter(
    (policy) => JSON.stringify(policy.Properties.Topics) === JSON.stringify([{ Ref: ref(topic) }]),
  );
  expect(policies).toHaveLength(1);
  return policies[0]?.Properties.PolicyDocument.Statement as Record<string, Json>[];
};
const unbundledStack = (id: string, props: SchedulerStackProps) => () => new SchedulerStack(cdkTestApp([]), id, props);

describe('registered tenants', () => {
  it('each get an input topic named <prefix>-tenant-<id>, the prefix being the stack name by default', () => {
    expect(Object.keys(stack.scheduler.tenantTopics).sort()).toEqual(['acme-corp', 'globex']);
    // The shared topic, one per tenant, and the alarm topic.
    template.resourceCountIs('AWS::SNS::Topic', 4);
    expect(resource(stack.alarmTopic).Properties.TopicName).toBe('Tenants-alarms');
    expect(resource(stack.scheduler.inputTopic).Properties.TopicName).toBe('Tenants-input');
    expect(resource(tenantTopic('acme-corp')).Properties.TopicName).toBe('Tenants-tenant-acme-corp');
    expect(resource(tenantTopic('globex')).Properties.TopicName).toBe('Tenants-tenant-globex');
  });

  it('may publish to their own topic only from their own accounts, and only over TLS', () => {
    for (const { id, accounts } of TENANTS.tenants) {
      const topic = tenantTopic(id);
      const statements = policyStatementsOf(topic);
      expect(statements.filter((statement) => statement.Effect === 'Allow')).toEqual([
        {
          Sid: 'PublishScheduleRequests',
          Effect: 'Allow',
          Principal: {
            AWS: accounts.length === 1 ? accountRoot(accounts[0]) : accounts.map(accountRoot),
          },
          Action: 'sns:Publish',
          Resource: stack.resolve(topic.topicArn),
        },
      ]);
      expect(statements).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
    }
  });

  it('are tagged as the stack’s, so that scripts/admin leaves them to a deploy; the shared topic is not a tenant’s', () => {
    const tagsOf = (topic: sns.Topic) => (resource(topic).Properties.Tags ?? []) as { Key: string; Value: string }[];
    for (const { id } of TENANTS.tenants) {
      expect(tagsOf(tenantTopic(id))).toContainEqual({ Key: STACK_TENANT_TOPIC_TAG.key, Value: STACK_TENANT_TOPIC_TAG.value });
    }
    expect(tagsOf(stack.scheduler.inputTopic).map(({ Key }) => Key)).not.toContain(STACK_TENANT_TOPIC_TAG.key);
  });

  it('give the topics made at runtime the policy the stack gives its own', () => {
    for (const { id, accounts } of TENANTS.tenants) {
      const topic = tenantTopic(id);
      // The runtime policy for a stand-in ARN, its ARN and account roots as the template writes them.
      const runtime = tenantTopicPolicy('arn:aws:sns:eu-west-1:123456789012:topic', accounts).Statement.map((statement) =>
        JSON.parse(
          JSON.stringify(statement)
            .replace(/"arn:aws:sns:eu-west-1:123456789012:topic"/g, JSON.stringify(stack.resolve(topic.topicArn)))
            .replace(/"arn:aws:iam::(\d{12}):root"/g, (_root, account: string) => JSON.stringify(accountRoot(account))),
        ),
      );
      expect(policyStatementsOf(topic)).toEqual(runtime);
    }
  });

  it('leave the shared topic open to any account unless publisherAccounts says otherwise', () => {
    expect(policyStatementsOf(stack.scheduler.inputTopic)).toContainEqual(
      expect.objectContaining({ Sid: 'PublishScheduleRequests', Principal: { AWS: '*' } }),
    );
  });

  it('deliver to their own ingest queue, apart from the shared topic’s, in the SNS envelope, admitted by one queue-policy statement naming their topics by pattern', () => {
    const { ingestQueue, publicIngestQueue, inputDeadLetterQueue } = stack.scheduler;
    const queueOf = (tenant: string) => (tenant === PUBLIC_TENANT_ID ? publicIngestQueue.queue : ingestQueue.queue);
    const subscriptions = Object.values(template.findResources('AWS::SNS::Subscription'));
    expect(subscriptions.map((subscription) => subscription.Properties)).toEqual(
      expect.arrayContaining(
        inputTopics().map(([tenant, topic]) => ({
          Protocol: 'sqs',
          RawMessageDelivery: false,
          TopicArn: stack.resolve(topic.topicArn),
          Endpoint: stack.resolve(queueOf(tenant).queueArn),
          // What SNS cannot deliver is set aside, whichever topic it came through.
          RedrivePolicy: { deadLetterTargetArn: stack.resolve(inputDeadLetterQueue.queueArn) },
        })),
      ),
    );
    expect(subscriptions).toHaveLength(3);

    const admitting = (queue: IQueue, sid: string, sourceArns: readonly Json[]) => {
      const [policyId, policy] =
        Object.entries(template.findResources('AWS::SQS::QueuePolicy', { Properties: { Queues: [{ Ref: ref(queue) }] } }))[0] ?? [];
      const allowed = (policy?.Properties.PolicyDocument.Statement as Record<string, Json>[] | undefined)?.filter(
        (statement) => statement.Effect === 'Allow',
      );
      expect(allowed).toEqual([
        {
          Sid: sid,
          Effect: 'Allow',
          Principal: { Service: 'sns.amazonaws.com' },
          Action: 'sqs:SendMessage',
          Resource: stack.resolve(queue.queueArn),
          Condition: { ArnLike: { 'aws:SourceArn': sourceArns } },
        },
      ]);
      return policyId;
    };
    // Every topic named as a tenant's in the stack's account and region, those made at runtime too:
    // the policy is the same whatever the tenants.
    const tenantPattern = {
      'Fn::Join': [
        '',
        ['arn:', { Ref: 'AWS::Partition' }, ':sns:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':Tenants-tenant-*'],
      ],
    };
    const sharedArn = stack.resolve(stack.scheduler.inputTopic.topicArn) as Json;
    const ingestPolicy = admitting(ingestQueue.queue, 'InputTopicsDeliver', [tenantPattern]);
    const publicPolicy = admitting(publicIngestQueue.queue, 'InputTopicsDeliver', [sharedArn]);
    const deadLetterPolicy = admitting(inputDeadLetterQueue, 'InputTopicsSetAside', [sharedArn, tenantPattern]);
    // A subscription delivers only once both its queues admit its messages.
    for (const subscription of subscriptions) {
      const topic = inputTopics().find(
        ([, candidate]) => JSON.stringify(stack.resolve(candidate.topicArn)) === JSON.stringify(subscription.Properties.TopicArn),
      );
      expect(subscription.DependsOn).toEqual(
        expect.arrayContaining([topic?.[0] === PUBLIC_TENANT_ID ? publicPolicy : ingestPolicy, deadLetterPolicy]),
      );
    }
  });

  it('reach the functions through the table: the registry resource holds them, every function is updated after it, no environment carries them', () => {
    const [registryId, registry] = Object.entries(template.findResources('Custom::TenantRegistry'))[0] ?? [];
    expect(JSON.parse(registry?.Properties[REGISTRY_PROPERTY] as string)).toEqual(TENANTS);
    for (const name of SCHEDULER_FUNCTIONS) {
      const fn = resource(stack.scheduler.functions[name].function);
      expect(fn.DependsOn).toEqual(expect.arrayContaining([registryId]));
      const variables = fn.Properties.Environment.Variables as Record<string, Json>;
      expect(Object.keys(variables)).not.toContain('SCHEDULER_TENANTS');
      expect(variables[ENV.topicPrefix]).toBe('Tenants');
    }
    // Ingest knows each input topic's tenant by the topic's name.
    for (const [tenant, topic] of inputTopics()) {
      expect(tenantOfInputTopicName('Tenants', resource(topic).Properties.TopicName as string)).toBe(tenant);
    }
  });

  it('are named with the topicPrefix when one is given', () => {
    const prefixed = new SchedulerStack(cdkTestApp([]), 'Prefixed', { scheduler: { tenants: TENANTS, topicPrefix: 'scheduler-prod' } });
    const names = Object.values(Template.fromStack(prefixed).findResources('AWS::SNS::Topic'))
      .map((topic) => topic.Properties.TopicName as string | undefined)
      .filter((name) => name !== undefined)
      .sort();
    expect(names).toEqual([
      'scheduler-prod-alarms',
      'scheduler-prod-input',
      'scheduler-prod-tenant-acme-corp',
      'scheduler-prod-tenant-globex',
    ]);
    expect(prefixed.scheduler.config.topicPrefix).toBe('scheduler-prod');
  });

  it('are refused at synth time when the registry or the prefix is invalid', () => {
    const withTenants = (tenants: unknown) => unbundledStack('Invalid', { scheduler: { tenants: tenants as TenantsDocument } });
    expect(withTenants({ tenants: [{ id: 'acme', accounts: ['12345'] }] })).toThrow(TenantsDocumentError);
    expect(withTenants({ tenants: [{ id: 'acme', accounts: [] }] })).toThrow(TenantsDocumentError);
    expect(withTenants({ tenants: [{ id: 'public', accounts: ['111111111111'] }] })).toThrow(TenantsDocumentError);
    expect(withTenants({ tenants: [{ id: 'Acme', accounts: ['111111111111'] }] })).toThrow(TenantsDocumentError);
    expect(withTenants({ tenant: [] })).toThrow(TenantsDocumentError);
    expect(
      withTenants({
        tenants: [
          { id: 'acme', accounts: ['111111111111'] },
          { id: 'acme', accounts: ['222222222222'] },
        ],
      }),
    ).toThrow(/registered twice/);
    expect(
      withTenants({
        tenants: [
          { id: 'acme', accounts: ['111111111111'] },
          { id: 'globex', accounts: ['222222222222'], targetAccounts: ['111111111111'] },
        ],
      }),
    ).toThrow('tenant "globex" lists 111111111111 in targetAccounts, but it is an account of tenant "acme"');
    expect(withTenants({ public: { targetAccounts: ['111111111111'] }, tenants: [{ id: 'acme', accounts: ['111111111111'] }] })).toThrow(
      'the public tenant lists 111111111111 in targetAccounts, but it is an account of tenant "acme"',
    );
    expect(
      withTenants({
        tenants: [{ id: 'acme', accounts: ['111111111111'], deadLetterTopic: 'arn:aws:sns:eu-west-1:222222222222:dead-letters' }],
      }),
    ).toThrow(/deadLetterTopic .* which it may not publish to/);
    expect(unbundledStack('BadPrefix', { scheduler: { topicPrefix: 'scheduler.prod' } })).toThrow(/topicPrefix/);
    expect(unbundledStack('LongPrefix', { scheduler: { topicPrefix: 'p'.repeat(209) } })).toThrow(/at most 208/);
  });
});

describe('dead-letter topics', () => {
  const tenants: TenantsDocument = {
    tenants: [{ id: 'acme', accounts: ['111111111111'], deadLetterTopic: 'arn:aws:sns:eu-west-1:111111111111:dead-letters' }],
  };

  it('reach the table in the registry resource', () => {
    const withDeadLetters = Template.fromStack(new SchedulerStack(cdkTestApp([]), 'DeadLetters', { scheduler: { tenants } }));
    const [registry] = Object.values(withDeadLetters.findResources('Custom::TenantRegistry'));
    expect(JSON.parse(registry?.Properties[REGISTRY_PROPERTY] as string).tenants[0].deadLetterTopic).toBe(
      'arn:aws:sns:eu-west-1:111111111111:dead-letters',
    );
  });

  it("are refused at synth time outside the stack's region, when the stack names its region", () => {
    expect(unbundledStack('OtherRegion', { env: { region: 'us-east-1' }, scheduler: { tenants } })).toThrow(
      `tenant "acme"'s deadLetterTopic arn:aws:sns:eu-west-1:111111111111:dead-letters is not in the scheduler's region us-east-1`,
    );
    expect(unbundledStack('SameRegion', { env: { region: 'eu-west-1' }, scheduler: { tenants } })).not.toThrow();
  });

  it("are refused at synth time when one is the scheduler's own topic: named with the prefix, in any account unless the stack names its own", () => {
    const deadLetterTopic = (account: string) => `arn:aws:sns:eu-west-1:${account}:Own-tenant-acme`;
    const own = (account: string, env?: { readonly account: string }) =>
      unbundledStack('Own', {
        ...(env ? { env } : {}),
        scheduler: { tenants: { tenants: [{ id: 'acme', accounts: [account], deadLetterTopic: deadLetterTopic(account) }] } },
      });
    expect(own('111111111111')).toThrow(
      `tenant "acme"'s deadLetterTopic ${deadLetterTopic('111111111111')} is one of the scheduler's own topics`,
    );
    expect(own('111111111111', { account: '111111111111' })).toThrow("is one of the scheduler's own topics");
    expect(own('111111111111', { account: '999999999999' })).not.toThrow();
  });

  it('are refused at synth time when one is the alarm topic an embedding app names otherwise, which the functions also know as their own', () => {
    const alarms = 'arn:aws:sns:eu-west-1:111111111111:ops-alarms';
    const embedded = (deadLetterTopic: string) => () => {
      const stack = new Stack(cdkTestApp([]), 'Embedding');
      return new AdhocScheduler(stack, 'Scheduler', {
        tenants: { tenants: [{ id: 'acme', accounts: ['111111111111'], deadLetterTopic }] },
        monitoring: { alarmTopic: sns.Topic.fromTopicArn(stack, 'Alarms', alarms) },
      });
    };
    expect(embedded(alarms)).toThrow(`tenant "acme"'s deadLetterTopic ${alarms} is one of the scheduler's own topics`);
    expect(embedded('arn:aws:sns:eu-west-1:111111111111:dead-letters')().config.ownTopicArns).toEqual([alarms]);
  });
});

describe('the CDK app', () => {
  let directory: string;
  beforeAll(() => {
    directory = mkdtempSync(join(tmpdir(), 'tenants-context-'));
  });
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  const propsFrom = (context: Record<string, unknown>) => schedulerStackPropsFromContext(cdkTestApp([], context).node).scheduler;
  const file = (name: string, text: string): string => {
    const path = join(directory, name);
    writeFileSync(path, text);
    return path;
  };

  it('reads the registry from cdk.json’s context, or from -c as JSON text', () => {
    expect(propsFrom({ tenants: TENANTS })?.tenants).toEqual(TENANTS);
    expect(propsFrom({ tenants: JSON.stringify(TENANTS) })?.tenants).toEqual(TENANTS);
    expect(propsFrom({})?.tenants).toBeUndefined();
  });

  it('reads it from a tenants file, as the local service’s, by absolute path or relative to where cdk runs', () => {
    const path = file('tenants.json', JSON.stringify(TENANTS, null, 2));
    expect(propsFrom({ tenantsFile: path })?.tenants).toEqual(TENANTS);
    expect(propsFrom({ tenantsFile: relative(process.cwd(), path) })?.tenants).toEqual(TENANTS);
  });

  it('takes the topic prefix from -c topicPrefix', () => {
    expect(propsFrom({ topicPrefix: 'scheduler-prod' })?.topicPrefix).toBe('scheduler-prod');
    expect(propsFrom({})?.topicPrefix).toBeUndefined();
  });

  it('refuses a registry it cannot read or that is invalid, naming where it came from', () => {
    const missing = join(directory, 'missing.json');
    expect(() => propsFrom({ tenantsFile: missing })).toThrow(ContextError);
    expect(() => propsFrom({ tenantsFile: missing })).toThrow(`context "tenantsFile" (${missing})`);
    const notJson = file('not-json.json', '{ tenants: [] }');
    expect(() => propsFrom({ tenantsFile: notJson })).toThrow(new RegExp(`^context "tenantsFile" \\(${notJson}\\): .*JSON`));
    const invalid = file('invalid.json', JSON.stringify({ tenants: [{ id: 'acme', accounts: ['12345'] }] }));
    expect(() => propsFrom({ tenantsFile: invalid })).toThrow(
      `context "tenantsFile" (${invalid}): invalid tenants: /tenants/0/accounts/0 must match pattern`,
    );
    expect(() => propsFrom({ tenants: { tenants: [{ id: 'acme' }] } })).toThrow(/^context "tenants": invalid tenants: .*accounts/);
    expect(() => propsFrom({ tenants: '{"tenants": [' })).toThrow(/^context "tenants": .*JSON/);
    expect(() => propsFrom({ tenants: TENANTS, tenantsFile: file('both.json', '{}') })).toThrow(/both give tenants/);
  });

  it('builds a stack with the registry from the context', () => {
    const app = cdkTestApp([], { tenants: TENANTS, topicPrefix: 'from-context' });
    const fromContext = new SchedulerStack(app, 'FromContext', schedulerStackPropsFromContext(app.node));
    expect(Object.keys(fromContext.scheduler.tenantTopics).sort()).toEqual(['acme-corp', 'globex']);
    expect(fromContext.scheduler.config).toMatchObject({ topicPrefix: 'from-context' });
    const [registry] = Object.values(Template.fromStack(fromContext).findResources('Custom::TenantRegistry'));
    expect(JSON.parse(registry?.Properties[REGISTRY_PROPERTY] as string)).toEqual(TENANTS);
  });
});

describe('the stack outputs', () => {
  it('tell each tenant where to publish, under a key derived from its id, beside the shared topic', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: Json }>;
    expect(tenantInputTopicOutputKey('acme-corp')).toBe('TenantAcmeCorpInputTopicArn');
    expect(Object.keys(outputs).sort()).toEqual(
      [
        ...new Set([
          ...Object.values(SCHEDULER_OUTPUTS),
          ...[...stack.redrivableQueues.keys()].flatMap((source) => Object.values(queueOutputKeys(source))),
          'TenantAcmeCorpInputTopicArn',
          'TenantGlobexInputTopicArn',
        ]),
      ].sort(),
    );
    for (const { id } of TENANTS.tenants) {
      expect(outputs[tenantInputTopicOutputKey(id)]?.Value).toEqual(stack.resolve(tenantTopic(id).topicArn));
    }
    expect(outputs[SCHEDULER_OUTPUTS.inputTopicArn]?.Value).toEqual(stack.resolve(stack.scheduler.inputTopic.topicArn));
  });

  it('refuse at synth two ids that would share an output key', () => {
    const tenants = {
      tenants: [
        { id: 'a-1b', accounts: ['111111111111'] },
        { id: 'a1b', accounts: ['222222222222'] },
      ],
    };
    expect(unbundledStack('Clash', { scheduler: { tenants } })).toThrow(
      'tenants "a-1b" and "a1b" would share the stack output TenantA1bInputTopicArn: rename one',
    );
  });
});

describe('the size of the registry', () => {
  /** `count` tenants with ids of `idLength` characters and one account each. */
  const registry = (count: number, idLength: number): TenantsDocument => ({
    tenants: Array.from({ length: count }, (_, index) => ({
      id: `t${index}`.padEnd(idLength, 'x'),
      accounts: [String(100_000_000_000 + index)],
    })),
  });

  it('is estimated from above: every value as JSON, each CloudFormation reference as long as the longest name it could be', () => {
    const scope = new Stack(cdkTestApp([]), 'Estimates');
    expect(estimatedEnvironmentBytes(scope, { NAME: 'value' })).toBe('{"NAME":"value"}'.length);
    expect(estimatedEnvironmentBytes(scope, { JSON: '{"a":1}' })).toBe('{"JSON":"{\\"a\\":1}"}'.length);
    expect(estimatedEnvironmentBytes(scope, { TABLE: Fn.ref('Table') })).toBe('{"TABLE":""}'.length + TOKEN_ESTIMATE_BYTES);
    const url = Fn.join('', ['https://sqs.', Aws.REGION, '.amazonaws.com/', Fn.ref('Queue')]);
    expect(estimatedEnvironmentBytes(scope, { URL: url })).toBe('{"URL":"https://sqs..amazonaws.com/"}'.length + 2 * TOKEN_ESTIMATE_BYTES);
    // An account id is always 12 digits.
    expect(estimatedEnvironmentBytes(scope, { ACCOUNT: Aws.ACCOUNT_ID })).toBe('{"ACCOUNT":"123456789012"}'.length);
  });

  it('leaves the functions’ environment as it is whatever the registry: 200 tenants with the longest ids (40 characters) synthesize', () => {
    expect(unbundledStack('TwoHundred', { scheduler: { tenants: registry(200, 40) } })).not.toThrow();
  });
});

function accountRoot(account: string): Json {
  return { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:iam::${account}:root`]] };
}
