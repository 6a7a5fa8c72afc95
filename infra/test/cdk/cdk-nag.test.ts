import type { TenantsDocument } from '@adhoc-scheduler/shared';
import { type App, Stack, Validations } from 'aws-cdk-lib';
import * as sns from 'aws-cdk-lib/aws-sns';
import { AwsSolutionsChecks, NagRuleCompliance, ServerlessChecks, type IApplyRule } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { AdhocScheduler } from '../../src/cdk/adhoc-scheduler.js';
import { ClientExampleStack } from '../../src/cdk/client-example/client-example-stack.js';
import { SchedulerStack } from '../../src/cdk/scheduler-stack.js';
import { cdkTestApp } from './cdk-test-app.js';

const EMITTER_ROLE = 'arn:aws:iam::123456789012:role/AdhocScheduler-emitter-eu-west-1';
const TENANTS: TenantsDocument = {
  public: { targetAccounts: ['999999999999'], maxOpenEvents: 1000 },
  tenants: [
    { id: 'acme', accounts: ['111111111111'], deadLetterTopic: 'arn:aws:sns:eu-west-1:111111111111:dead-letters' },
    { id: 'globex', accounts: ['222222222222'], maxIngestPerSecond: 5 },
  ],
};

/** What every deployment shape of the app creates: the stack alone, with tenants and settings, embedded, and the client example. */
function appUnderTest(): App {
  const app = cdkTestApp([]);
  new SchedulerStack(app, 'AdhocScheduler');
  new SchedulerStack(app, 'Tenants', {
    scheduler: { tenants: TENANTS, publisherAccounts: ['333333333333'], emitterMaxConcurrency: 50, emitterReservedConcurrency: 100 },
  });
  const embedding = new Stack(app, 'Embedding');
  new AdhocScheduler(embedding, 'Scheduler', {
    topicPrefix: 'jobs',
    monitoring: { alarmTopic: new sns.Topic(embedding, 'Operations', { enforceSSL: true }) },
  });
  new ClientExampleStack(app, 'Client', { emitterRoleArn: EMITTER_ROLE });
  return app;
}

/** A finding of a rule on a resource, acknowledged or not. */
interface Finding {
  readonly id: string;
  readonly path: string;
}

/** Records what the rule finds on the resource, before the pack applies acknowledgements. */
function record(findings: Finding[], packName: string, params: IApplyRule): void {
  const id = `${packName}-${params.ruleSuffixOverride ?? params.rule.name}`;
  const path = params.node.node.path;
  try {
    const result = params.rule(params.node);
    if (result === NagRuleCompliance.NON_COMPLIANT) findings.push({ id, path });
    else if (Array.isArray(result)) findings.push(...result.map((finding) => ({ id: `${id}[${finding}]`, path })));
  } catch {
    // The pack reports a rule that throws as a finding of the rule.
    findings.push({ id, path });
  }
}

/** The packs, recording every finding too: an acknowledgement that answers none is stale. */
class RecordingAwsSolutionsChecks extends AwsSolutionsChecks {
  readonly findings: Finding[] = [];
  protected override applyRule(params: IApplyRule): void {
    record(this.findings, this.readPackName, params);
    super.applyRule(params);
  }
}

class RecordingServerlessChecks extends ServerlessChecks {
  readonly findings: Finding[] = [];
  protected override applyRule(params: IApplyRule): void {
    record(this.findings, this.readPackName, params);
    super.applyRule(params);
  }
}

interface Acknowledgement {
  readonly id: string;
  readonly path: string;
  readonly reason: string;
}

/** Every `Validations.of(construct).acknowledge(...)` in the tree. */
function acknowledgements(root: IConstruct): Acknowledgement[] {
  return root.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, string>).map(([qualifiedId, reason]) => ({
          // CDK records a rule of no known plugin as an annotation.
          id: qualifiedId.replace(/^annotation::/i, ''),
          path: construct.node.path,
          reason,
        })),
      ),
  );
}

const covers = (acknowledgement: Acknowledgement, finding: Finding): boolean =>
  acknowledgement.id === finding.id && (finding.path === acknowledgement.path || finding.path.startsWith(`${acknowledgement.path}/`));

let app: App;
beforeAll(() => {
  app = appUnderTest();
});

describe.each([
  ['AwsSolutions', () => new RecordingAwsSolutionsChecks()],
  ['Serverless', () => new RecordingServerlessChecks()],
] as const)('the cdk-nag %s pack', (packName, newPack) => {
  it('has no finding left unacknowledged', () => {
    const report = newPack().validateScope(app);
    expect(
      report.violations.flatMap((violation) =>
        violation.violatingResources.map((resource) => `${violation.ruleName} at ${resource.constructPath}`),
      ),
    ).toEqual([]);
    expect(report.success).toBe(true);
  });

  it('has no acknowledgement that answers none of its findings', () => {
    const pack = newPack();
    pack.validateScope(app);
    const ofThisPack = acknowledgements(app).filter((acknowledgement) => acknowledgement.id.startsWith(`${packName}-`));
    expect(ofThisPack.length).toBeGreaterThan(0);
    expect(ofThisPack.filter((acknowledgement) => !pack.findings.some((finding) => covers(acknowledgement, finding)))).toEqual([]);
  });
});

describe('acknowledged findings', () => {
  it('are these, each next to its construct with a reason: a new one fails here until it is added', () => {
    const byPath = acknowledgements(app)
      .filter(({ path }) => path.startsWith('AdhocScheduler/') || path.startsWith('Client/'))
      .map(({ id, path }) => `${path}: ${id}`)
      .sort();
    expect(byPath).toEqual(
      [
        ...['Ingest', 'Loader', 'Loading', 'Emitter', 'Changes'].map(
          (fn) => `AdhocScheduler/Scheduler/${fn}/Function: Serverless-LambdaTracing`,
        ),
        ...['Ingest', 'Loading', 'Emitter', 'Changes'].map((fn) => `AdhocScheduler/Scheduler/${fn}/Function: Serverless-LambdaDLQ`),
        'AdhocScheduler/Scheduler/Ingest/Function/Queue: Serverless-LambdaEventSourceMappingDestination',
        'AdhocScheduler/Scheduler/Ingest/Function/PublicQueue: Serverless-LambdaEventSourceMappingDestination',
        'AdhocScheduler/Scheduler/Loading/Function/Queue: Serverless-LambdaEventSourceMappingDestination',
        'AdhocScheduler/Scheduler/Emitter/Function/Queue: Serverless-LambdaEventSourceMappingDestination',
        'AdhocScheduler/Scheduler/Changes/Function/Queue: Serverless-LambdaEventSourceMappingDestination',
        'AdhocScheduler/Scheduler/Loader/Function: Serverless-LambdaDLQ',
        'AdhocScheduler/Scheduler/Loader/Function: Serverless-LambdaAsyncFailureDestination',
        'AdhocScheduler/Scheduler/Emitter/Role: AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:sns:*:*:*]',
        // The registry resource's writer, and the custom-resources framework CDK makes for it.
        'AdhocScheduler/Scheduler/TenantRegistry/Writer/Function: Serverless-LambdaTracing',
        'AdhocScheduler/Scheduler/TenantRegistry/Writer/Function: Serverless-LambdaDLQ',
        ...[
          'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
          'AwsSolutions-IAM5[Resource::<SchedulerTenantRegistryWriterFunctionBE262BC4.Arn>:*]',
          'Serverless-LambdaDLQ',
          'Serverless-LambdaDefaultMemorySize',
          'Serverless-LambdaTracing',
        ].map((id) => `AdhocScheduler/Scheduler/TenantRegistry/Provider/framework-onEvent: ${id}`),
        ...[
          'PublicIngestQueue/DeadLetters',
          'IngestQueue/DeadLetters',
          'LoadingQueue/DeadLetters',
          'DelayQueue/DeadLetters',
          'BulkChanges/ChangesQueue/DeadLetters',
          'InputDeadLetters',
          'LoaderDeadLetters',
        ].map((queue) => `AdhocScheduler/Scheduler/${queue}: Serverless-SQSRedrivePolicy`),
        // Dead-letter queues of an SNS subscription and an EventBridge target, which the rule does not look for.
        'AdhocScheduler/Scheduler/InputDeadLetters: AwsSolutions-SQS3',
        'AdhocScheduler/Scheduler/LoaderDeadLetters: AwsSolutions-SQS3',
        'Client/Consumer/Function: Serverless-LambdaTracing',
        'Client/Consumer: Serverless-LambdaDLQ',
        'Client/Consumer: Serverless-SNSRedrivePolicy',
      ].sort(),
    );
  });

  it('each say why, in a sentence', () => {
    const all = acknowledgements(app);
    expect(all.length).toBeGreaterThan(0);
    for (const { reason } of all) expect(reason).toMatch(/^[A-Z].{60,}\.$/s);
  });
});

describe('the packs as validation plugins', () => {
  it('let the app synthesize, as they would fail it on a finding', () => {
    const checked = appUnderTest();
    Validations.of(checked).addPlugins(new AwsSolutionsChecks(checked), new ServerlessChecks(checked));
    expect(() => checked.synth()).not.toThrow();

    const unchecked = cdkTestApp([]);
    new sns.Topic(new Stack(unchecked, 'Plain'), 'Topic');
    Validations.of(unchecked).addPlugins(new AwsSolutionsChecks(unchecked));
    expect(() => unchecked.synth()).toThrow(/AwsSolutions-SNS3/);
  });
});
