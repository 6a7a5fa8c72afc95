import { type Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { assertEnvironmentFits } from './lambda-environment.js';
import { REPO_ROOT, PNPM_LOCK_FILE } from './paths.js';

export interface NodeFunctionProps {
  /** TypeScript file exporting `handler`. */
  readonly entry: string;
  readonly description: string;
  readonly timeout: Duration;
  readonly memorySize: number;
  readonly logRetention: logs.RetentionDays;
  readonly environment?: Readonly<Record<string, string>>;
  /** A fixed role name, for roles that other accounts refer to in their resource policies. */
  readonly roleName?: string;
  readonly reservedConcurrentExecutions?: number;
}

/**
 * Every Lambda function of the project is one of these: Node 24 on arm64, bundled by the
 * locally installed esbuild (never Docker), source maps on, JSON logs into its own log group
 * with a retention, and a role that starts with nothing but writing to that log group.
 * Callers add exactly the permissions the function's code uses.
 */
export class NodeFunction extends Construct {
  readonly function: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: NodeFunctionProps) {
    super(scope, id);

    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention,
      // Logs go with the stack: nothing is left behind (or billed) after `cdk destroy`.
      removalPolicy: RemovalPolicy.DESTROY,
    });

    // An explicit role instead of AWSLambdaBasicExecutionRole, whose log permissions cover
    // every log group in the account.
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      roleName: props.roleName,
      description: props.description,
    });
    this.logGroup.grantWrite(this.role);

    const environment = { ...props.environment, NODE_OPTIONS: '--enable-source-maps' };
    assertEnvironmentFits(this, environment);

    this.function = new NodejsFunction(this, 'Function', {
      entry: props.entry,
      handler: 'handler',
      description: props.description,
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      timeout: props.timeout,
      memorySize: props.memorySize,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      role: this.role,
      logGroup: this.logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      environment,
      projectRoot: REPO_ROOT,
      depsLockFilePath: PNPM_LOCK_FILE,
      bundling: {
        format: OutputFormat.CJS,
        minify: true,
        sourceMap: true,
        // The Node 24 runtime ships AWS SDK v3; leaving it out keeps bundles small and cold starts short.
        externalModules: ['@aws-sdk/*'],
        forceDockerBundling: false,
        logLevel: LogLevel.WARNING,
      },
    });
    Validations.of(this.function).acknowledge({
      id: 'Serverless-LambdaTracing',
      reason:
        'Tracing is off by choice: every function logs JSON naming the events it handled and emits its metrics as EMF, which the dashboard and alarms use; active X-Ray tracing would add a trace per invocation on the latency-critical emitter path and xray:PutTraceSegments to every role.',
    });
  }
}
