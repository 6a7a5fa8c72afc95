import { configToEnv, ENV, loadConfig, type SchedulerConfig } from '@adhoc-scheduler/shared';
import { Token } from 'aws-cdk-lib';

/**
 * Config values the stack provides: resource names, the input topics' prefix and the
 * scheduler's own topics (construct props, not settings), no endpoints, the region Lambda
 * sets, metrics on.
 */
const PROVIDED_BY_STACK = [
  'region',
  'messagingEndpoint',
  'dynamodbEndpoint',
  'tableName',
  'delayQueueUrl',
  'loadingQueueUrl',
  'changesQueueUrl',
  'topicPrefix',
  'accountId',
  'ownTopicArns',
  'metricsEnabled',
] as const satisfies readonly (keyof SchedulerConfig)[];

/** The settings a deployment may tune. */
export type SchedulerSettings = Partial<Omit<SchedulerConfig, (typeof PROVIDED_BY_STACK)[number]>>;

export const SCHEDULER_SETTING_NAMES = (Object.keys(ENV) as (keyof SchedulerConfig)[]).filter(
  (name): name is keyof SchedulerSettings => !(PROVIDED_BY_STACK as readonly string[]).includes(name),
);

export interface ProvidedByStack {
  readonly tableName: string;
  readonly delayQueueUrl: string;
  readonly loadingQueueUrl: string;
  readonly changesQueueUrl: string;
  /** The input topics are named `<topicPrefix>-input` and `<topicPrefix>-tenant-<id>`. */
  readonly topicPrefix: string;
  /** The stack's account (`Aws.ACCOUNT_ID`): its topics named with the prefix are the scheduler's own. */
  readonly accountId: string;
  /** Further topics of the scheduler's own, such as an alarm topic named otherwise. */
  readonly ownTopicArns: readonly string[];
}

/**
 * The deployed scheduler's config, read by the same `loadConfig` the functions run, so a
 * setting the functions would reject fails `cdk synth` instead of the first invocation. The
 * account and ARNs that are CloudFormation references are known only at deploy time: they are
 * checked by the functions' own `loadConfig`, and the literal ones here.
 */
export function deployedSchedulerConfig(provided: ProvidedByStack, settings: SchedulerSettings = {}): SchedulerConfig {
  const env: Record<string, string> = {
    [ENV.tableName]: provided.tableName,
    [ENV.delayQueueUrl]: provided.delayQueueUrl,
    [ENV.loadingQueueUrl]: provided.loadingQueueUrl,
    [ENV.changesQueueUrl]: provided.changesQueueUrl,
    [ENV.topicPrefix]: provided.topicPrefix,
    [ENV.metricsEnabled]: 'true',
    [ENV.ownTopicArns]: provided.ownTopicArns.filter((arn) => !Token.isUnresolved(arn)).join(','),
  };
  if (!Token.isUnresolved(provided.accountId)) env[ENV.accountId] = provided.accountId;
  for (const [key, value] of Object.entries(settings) as [keyof SchedulerSettings, unknown][]) {
    if (value !== undefined) env[ENV[key]] = String(value);
  }
  return { ...loadConfig(env), accountId: provided.accountId, ownTopicArns: provided.ownTopicArns };
}

/** Lambda sets AWS_REGION itself and refuses it as a function variable. */
const SET_BY_LAMBDA: ReadonlySet<string> = new Set([ENV.region]);

/** The functions' environment: every setting of the config, written out by the config module. */
export function lambdaEnvironment(config: SchedulerConfig): Record<string, string> {
  return Object.fromEntries(Object.entries(configToEnv(config)).filter(([name]) => !SET_BY_LAMBDA.has(name)));
}
