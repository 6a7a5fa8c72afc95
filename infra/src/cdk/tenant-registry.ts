import { LISTING_PROPERTY, REGISTRY_PROPERTY } from '@adhoc-scheduler/functions';
import {
  ENV,
  REGISTRY_ID_PREFIX,
  REGISTRY_KEY,
  REGISTRY_LISTING_LAYOUT,
  registryListingTableName,
  TABLE,
  type TenantsDocument,
} from '@adhoc-scheduler/shared';
import { type CfnElement, CustomResource, Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { NodeFunction } from './node-function.js';
import { REGISTRY_WRITER_ENTRY } from './paths.js';

/** The registry's items, and no other: `#registry#<id>`, `#registry-public`, `#registry-account#<account>`. */
export const REGISTRY_ITEM_KEYS = `${REGISTRY_ID_PREFIX}*`;

export interface TenantRegistryResourceProps {
  readonly table: dynamodb.ITable;
  /** The listing table's, as the events table's. */
  readonly removalPolicy: RemovalPolicy;
  /** The registry, checked at synth. */
  readonly tenants: TenantsDocument;
  readonly logRetention: logs.RetentionDays;
}

/**
 * The stack's tenant registry as data: a custom resource that writes the CDK props' registry
 * into the table at each deployment that changes it (functions/src/registry-writer.ts), where the
 * functions read it through their cache. The functions depend on it, so none is updated before
 * the registry it reads is there: a stack that kept its registry in the functions' environment
 * upgrades with every tenant in the table first.
 */
export class TenantRegistryResource extends Construct {
  readonly resource: CustomResource;
  /** The registry's listing by id, beside the events table and named after it (REGISTRY_LISTING_LAYOUT). */
  readonly listing: dynamodb.Table;
  /** The function that writes the registry (its role holds the registry's items alone). */
  readonly writer: NodeFunction;

  constructor(scope: Construct, id: string, props: TenantRegistryResourceProps) {
    super(scope, id);
    this.listing = listingTable(this, props.table, props.removalPolicy);
    const writer = new NodeFunction(this, 'Writer', {
      entry: REGISTRY_WRITER_ENTRY,
      description: "Writes the stack's tenant registry into the events table at each deployment that changes it",
      timeout: Duration.minutes(5),
      memorySize: 256,
      logRetention: props.logRetention,
      environment: { [ENV.tableName]: props.table.tableName },
    });
    // The registry's items: read whole (the index's #registry partition, then by key), written as the
    // changes, and the entries an earlier version wrote listed by id once.
    writer.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem'],
        resources: [props.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [REGISTRY_ITEM_KEYS] } },
      }),
    );
    writer.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['dynamodb:Query'], resources: [`${props.table.tableArn}/index/${TABLE.tenantIndex}`] }),
    );
    // The listing's one partition: each tenant listed, and taken off it.
    writer.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:BatchWriteItem'],
        resources: [this.listing.tableArn],
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [REGISTRY_KEY] } },
      }),
    );
    const provider = new cr.Provider(this, 'Provider', { onEventHandler: writer.function });
    acknowledgeFramework(provider, writer);
    this.writer = writer;
    this.resource = new CustomResource(this, 'Registry', {
      serviceToken: provider.serviceToken,
      resourceType: 'Custom::TenantRegistry',
      properties: { [REGISTRY_PROPERTY]: JSON.stringify(props.tenants), [LISTING_PROPERTY]: LISTING_TABLE },
    });
    // Written after the listing table is there (its name is derived, not referenced).
    this.resource.node.addDependency(this.listing);
  }
}

/** The listing property's value: a stack listed in the index before gets an update that lists its entries in the table. */
const LISTING_TABLE = 'table';

function listingTable(scope: Construct, events: dynamodb.ITable, removalPolicy: RemovalPolicy): dynamodb.Table {
  const { partitionKey, sortKey } = REGISTRY_LISTING_LAYOUT;
  return new dynamodb.Table(scope, 'Listing', {
    // Named after the events table, so whatever knows that one (the functions, scripts/admin) finds it.
    tableName: registryListingTableName(events.tableName),
    partitionKey: { name: partitionKey.name, type: dynamodb.AttributeType.STRING },
    sortKey: { name: sortKey.name, type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    removalPolicy,
  });
}

/** A deployment's failure is its own report: nothing is invoked asynchronously, to be set aside. */
const SYNCHRONOUS =
  'CloudFormation invokes it through the custom-resources framework and waits for its answer: a failure fails the deployment, which rolls back, and nothing is invoked asynchronously to be set aside.';

/** What cdk-nag finds in the custom-resources Provider's framework, which CDK makes, and in the writer it invokes. */
function acknowledgeFramework(provider: cr.Provider, writer: NodeFunction): void {
  const writerId = Stack.of(writer).getLogicalId(writer.function.node.defaultChild as CfnElement);
  Validations.of(writer.function).acknowledge({ id: 'Serverless-LambdaDLQ', reason: SYNCHRONOUS });
  Validations.of(provider.node.findChild('framework-onEvent')).acknowledge(
    {
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      reason:
        "The custom-resources Provider's own framework function, which CDK makes: AWS's basic execution policy lets it write its logs, and it is granted nothing else of the scheduler's.",
    },
    {
      id: `AwsSolutions-IAM5[Resource::<${writerId}.Arn>:*]`,
      reason:
        'The framework invokes the registry writer, and CDK grants that on the function and its versions (the :* suffix): that one function, nothing else.',
    },
    { id: 'Serverless-LambdaDLQ', reason: SYNCHRONOUS },
    {
      id: 'Serverless-LambdaDefaultMemorySize',
      reason:
        "CDK's framework function forwards one CloudFormation request to the writer and sends back its answer: the default memory is more than that needs.",
    },
    {
      id: 'Serverless-LambdaTracing',
      reason:
        "CDK's framework function runs only during a deployment, and its logs record each request it forwards: a trace would say nothing more.",
    },
  );
}
