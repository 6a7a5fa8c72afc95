import { configToEnv, ENV, loadConfig, type SchedulerConfig, type TenantsDocument } from '@adhoc-scheduler/shared';

/**
 * Config values the stack provides: resource names, the input topics' prefix and the tenants
 * (construct props, not settings), no endpoints, the region Lambda sets, metrics on.
 */
const PROVIDED_BY_STACK = [
  'region',
  'messagingEndpoint',
  'dynamodbEndpoint',
  'tableName',
  'delayQueueUrl',
  'loadingQueueUrl',
  'topicPrefix',
  'tenants',
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
  /** The input topics are named `<topicPrefix>-input` and `<topicPrefix>-tenant-<id>`. */
  readonly topicPrefix: string;
  readonly tenants: TenantsDocument;
}

/**
 * The deployed scheduler's config, read by the same `loadConfig` the functions run, so a
 * setting the functions would reject fails `cdk synth` instead of the first invocation.
 */
export function deployedSchedulerConfig(provided: ProvidedByStack, settings: SchedulerSettings = {}): SchedulerConfig {
  const env: Record<string, string> = {
    [ENV.tableName]: provided.tableName,
    [ENV.delayQueueUrl]: provided.delayQueueUrl,
    [ENV.loadingQueueUrl]: provided.loadingQueueUrl,
    [ENV.topicPrefix]: provided.topicPrefix,
    [ENV.tenants]: JSON.stringify(provided.tenants),
    [ENV.metricsEnabled]: 'true',
  };
  for (const [key, value] of Object.entries(settings) as [keyof SchedulerSettings, unknown][]) {
    if (value !== undefined) env[ENV[key]] = String(value);
  }
  return loadConfig(env);
}

/** Lambda sets AWS_REGION itself and refuses it as a function variable. */
const SET_BY_LAMBDA: ReadonlySet<string> = new Set([ENV.region]);

/** The functions' environment: every setting of the config, written out by the config module. */
export function lambdaEnvironment(config: SchedulerConfig): Record<string, string> {
  return Object.fromEntries(Object.entries(configToEnv(config)).filter(([name]) => !SET_BY_LAMBDA.has(name)));
}
