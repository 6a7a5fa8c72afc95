import { configToEnv, ENV, loadConfig, type SchedulerConfig } from '@adhoc-scheduler/shared';

/** Config values the stack provides: resource names, no endpoints, the region Lambda sets, metrics on. */
const PROVIDED_BY_STACK = [
  'region',
  'messagingEndpoint',
  'dynamodbEndpoint',
  'tableName',
  'delayQueueUrl',
  'loadingQueueUrl',
  'metricsEnabled',
] as const satisfies readonly (keyof SchedulerConfig)[];

/** The settings a deployment may tune. */
export type SchedulerSettings = Partial<Omit<SchedulerConfig, (typeof PROVIDED_BY_STACK)[number]>>;

export const SCHEDULER_SETTING_NAMES = (Object.keys(ENV) as (keyof SchedulerConfig)[]).filter(
  (name): name is keyof SchedulerSettings => !(PROVIDED_BY_STACK as readonly string[]).includes(name),
);

export interface SchedulerResources {
  readonly tableName: string;
  readonly delayQueueUrl: string;
  readonly loadingQueueUrl: string;
}

/**
 * The deployed scheduler's config, read by the same `loadConfig` the functions run, so a
 * setting the functions would reject fails `cdk synth` instead of the first invocation.
 */
export function deployedSchedulerConfig(resources: SchedulerResources, settings: SchedulerSettings = {}): SchedulerConfig {
  const env: Record<string, string> = {
    [ENV.tableName]: resources.tableName,
    [ENV.delayQueueUrl]: resources.delayQueueUrl,
    [ENV.loadingQueueUrl]: resources.loadingQueueUrl,
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
