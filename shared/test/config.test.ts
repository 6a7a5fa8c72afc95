import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, configToEnv, DEFAULTS, ENV, loadConfig, REPAIR_DELAY_MARGIN_SECONDS, type SchedulerConfig } from '../src/config.js';
import { customEnv, requiredEnv } from './factories.js';

/** The operator's configuration page, whose table documents every setting's default. */
const CONFIGURATION_PAGE = new URL('../../docs/operators/configuration.md', import.meta.url);

/** The configuration table's default column, by variable (a row may name several), as written. */
function documentedDefaults(): Map<string, string> {
  const lines = readFileSync(CONFIGURATION_PAGE, 'utf8').split('\n');
  const header = lines.indexOf('| variable | default | meaning |');
  if (header < 0) throw new Error(`no configuration table (| variable | default | meaning |) in ${CONFIGURATION_PAGE.pathname}`);
  const defaults = new Map<string, string>();
  // The rows follow the header and its separator line, up to the first line outside the table.
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const [variables = '', documented = ''] = line.split('|').slice(1, 3);
    for (const [, variable] of variables.matchAll(/`([A-Z_]+)`/g)) if (variable) defaults.set(variable, documented.trim());
  }
  return defaults;
}

/**
 * The value a default cell states for AWS: its first word ("0 (100 locally)" is 0, "none" no
 * topics, "unset" no value, JSON as JSON); undefined for a setting the runtime or the stack sets.
 */
function documentedValue(cell: string, defaults: ReadonlyMap<string, string>): { readonly value: unknown } | undefined {
  if (cell.startsWith('set by')) return undefined;
  const word = (cell.split(' ')[0] ?? '').replaceAll('`', '');
  if (cell === 'window − interval') {
    const seconds = (variable: string) => Number(defaults.get(variable)?.split(' ')[0]);
    return { value: seconds(ENV.nearPathWindowSeconds) - seconds(ENV.loaderIntervalSeconds) };
  }
  if (word === 'unset') return { value: undefined };
  if (word === 'none') return { value: [] };
  if (word === 'true' || word === 'false') return { value: word === 'true' };
  if (/^\d+$/.test(word)) return { value: Number(word) };
  if (word.startsWith('{')) return { value: JSON.parse(word) };
  return { value: word };
}

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('takes the defaults the configuration table documents, for every setting', () => {
    const defaults = documentedDefaults();
    expect(
      [...defaults.keys()].filter((variable) => !Object.values<string>(ENV).includes(variable)),
      'documented, but no setting',
    ).toEqual([]);
    const config = loadConfig(requiredEnv());
    const documented: Record<string, unknown> = {};
    const taken: Record<string, unknown> = {};
    for (const [setting, variable] of Object.entries(ENV)) {
      const cell = defaults.get(variable);
      expect(cell, `${variable} in the configuration table`).toBeDefined();
      const stated = documentedValue(cell ?? '', defaults);
      if (stated === undefined) continue;
      documented[variable] = stated.value;
      taken[variable] = config[setting as keyof SchedulerConfig];
    }
    // All but the four resources the runtime or the stack sets (the table and three queues).
    expect(Object.keys(documented)).toHaveLength(Object.keys(ENV).length - 4);
    expect(taken).toEqual(documented);
  });

  it('takes the AWS defaults for everything but the resource names', () => {
    const config = loadConfig(requiredEnv());
    expect(config).toMatchObject({
      messagingEndpoint: undefined,
      dynamodbEndpoint: undefined,
      tableName: 'scheduler-events',
      delayQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/scheduler-delay',
      loadingQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/scheduler-loading',
      changesQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/scheduler-changes',
      loaderLookaheadSeconds: DEFAULTS.nearPathWindowSeconds - DEFAULTS.loaderIntervalSeconds,
      metricsEnabled: false,
    });
  });

  it('reads every setting from its variable', () => {
    expect(loadConfig(customEnv())).toMatchObject({
      region: 'eu-central-1',
      messagingEndpoint: 'http://127.0.0.1:4566',
      dynamodbEndpoint: 'http://127.0.0.1:8000',
      nearPathWindowSeconds: 300,
      loaderIntervalSeconds: 30,
      loaderLookaheadSeconds: 240,
      loaderTickBudgetSeconds: 20,
      loaderInitialCatchUpSeconds: 120,
      loadingChunkSize: 50,
      bucketSeconds: 30,
      shardCount: 4,
      indexQueuedEvents: false,
      emitterLeadMs: 150,
      changeCutoffSeconds: 4,
      changeWriteTimeoutMs: 800,
      emitMaxAgeSeconds: 7200,
      repairAfterSeconds: 120,
      emitterMaxUnrecordedEnds: 250,
      emitterEndsLingerMs: 40,
      endsRetryMaxSeconds: 20,
      repairDelaySeconds: 45,
      dynamodbBatchWrites: 'transactions',
      retentionSeconds: 3600,
      logLevel: 'debug',
      metricsEnabled: true,
      topicPrefix: 'scheduler-prod',
      accountId: '123456789012',
      ownTopicArns: ['arn:aws:sns:eu-central-1:123456789012:ops-alarms', 'arn:aws:sns:eu-central-1:123456789012:ops-pager'],
      maxScheduleAheadSeconds: 2_592_000,
    });
  });

  it("knows no account of the scheduler and no topics of its own beyond the prefix's unless told, and takes dates up to a year ahead", () => {
    expect(loadConfig(requiredEnv())).toMatchObject({ accountId: undefined, ownTopicArns: [], maxScheduleAheadSeconds: 365 * 24 * 3600 });
  });

  it('treats an empty variable as unset', () => {
    const env = { ...requiredEnv(), [ENV.shardCount]: '', [ENV.region]: '', [ENV.messagingEndpoint]: '' };
    expect(loadConfig(env)).toEqual(loadConfig(requiredEnv()));
  });

  it.each([[ENV.tableName], [ENV.delayQueueUrl], [ENV.loadingQueueUrl], [ENV.changesQueueUrl]])('requires %s', (name) => {
    const env = requiredEnv();
    delete env[name];
    expect(configError(env).message).toContain(name);
  });

  it.each([
    [ENV.nearPathWindowSeconds, 'ten'],
    [ENV.nearPathWindowSeconds, '901'],
    [ENV.loaderIntervalSeconds, '0'],
    [ENV.loaderLookaheadSeconds, '2.5'],
    [ENV.loaderTickBudgetSeconds, '-1'],
    [ENV.loaderInitialCatchUpSeconds, 'soon'],
    [ENV.loadingChunkSize, '1001'],
    [ENV.bucketSeconds, '0'],
    [ENV.shardCount, '257'],
    [ENV.emitterLeadMs, '5001'],
    [ENV.changeWriteTimeoutMs, '99'],
    [ENV.emitMaxAgeSeconds, '0'],
    [ENV.emitterMaxUnrecordedEnds, '-1'],
    [ENV.emitterEndsLingerMs, '5001'],
    [ENV.endsRetryMaxSeconds, '0'],
    [ENV.repairDelaySeconds, '901'],
    [ENV.dynamodbBatchWrites, 'sometimes'],
    [ENV.retentionSeconds, '59'],
    [ENV.metricsEnabled, 'yes'],
    [ENV.accountId, '12345678901'],
    [ENV.accountId, 'arn:aws:iam::123456789012:root'],
    [ENV.ownTopicArns, 'arn:aws:sns:eu-west-1:123456789012:alarms,alarms'],
    [ENV.ownTopicArns, 'arn:aws:sqs:eu-west-1:123456789012:alarms'],
    [ENV.maxScheduleAheadSeconds, '59'],
    [ENV.maxScheduleAheadSeconds, '316224001'],
  ])('rejects %s=%s, naming the variable and showing the value', (name, value) => {
    const { message } = configError({ ...requiredEnv(), [name]: value });
    expect(message).toContain(name);
    expect(message).toContain(`"${value}"`);
  });

  it.each([
    ['true', true],
    ['1', true],
    ['false', false],
    ['0', false],
  ])('reads %s as metrics %s', (value, enabled) => {
    expect(loadConfig({ ...requiredEnv(), [ENV.metricsEnabled]: value }).metricsEnabled).toBe(enabled);
  });

  describe('keeps the loader ahead of the near-path window', () => {
    const timing = (window: number, interval: number, lookahead?: number): Record<string, string> => ({
      ...requiredEnv(),
      [ENV.nearPathWindowSeconds]: String(window),
      [ENV.loaderIntervalSeconds]: String(interval),
      ...(lookahead === undefined ? {} : { [ENV.loaderLookaheadSeconds]: String(lookahead) }),
    });

    it('by default looking ahead the window minus one interval', () => {
      expect(loadConfig(timing(300, 20)).loaderLookaheadSeconds).toBe(280);
    });

    it('accepting a lookahead plus interval that just fits the window', () => {
      expect(loadConfig(timing(300, 20, 280)).loaderLookaheadSeconds).toBe(280);
    });

    it('rejecting a lookahead plus interval beyond the window, naming all three variables', () => {
      const { message } = configError(timing(300, 20, 281));
      for (const name of [ENV.loaderLookaheadSeconds, ENV.loaderIntervalSeconds, ENV.nearPathWindowSeconds]) {
        expect(message).toContain(name);
      }
    });

    it('rejecting a lookahead no longer than the interval', () => {
      const { message } = configError(timing(300, 60, 60));
      expect(message).toContain(ENV.loaderLookaheadSeconds);
      expect(message).toContain(ENV.loaderIntervalSeconds);
    });
  });
});

describe('keeps changes closed before the emitter reads the record', () => {
  const timing = (cutoffSeconds: number, leadMs: number, writeTimeoutMs: number): Record<string, string> => ({
    ...requiredEnv(),
    [ENV.changeCutoffSeconds]: String(cutoffSeconds),
    [ENV.emitterLeadMs]: String(leadMs),
    [ENV.changeWriteTimeoutMs]: String(writeTimeoutMs),
  });

  it('accepting a cutoff that covers the lead, a second of early arrival and a change write’s timeout', () => {
    expect(loadConfig(timing(4, 1300, 1700))).toMatchObject({ changeCutoffSeconds: 4, changeWriteTimeoutMs: 1700 });
  });

  it('rejecting a cutoff that a change write could outlast, naming all three variables', () => {
    const { message } = configError(timing(4, 1300, 1701));
    for (const name of [ENV.changeCutoffSeconds, ENV.emitterLeadMs, ENV.changeWriteTimeoutMs]) expect(message).toContain(name);
    expect(message).toContain('must be at least 5');
  });
});

describe('keeps a repaired copy from being read before a handed-over end is tried again', () => {
  const timing = (endsRetryMax: number, repairDelay: number): Record<string, string> => ({
    ...requiredEnv(),
    [ENV.endsRetryMaxSeconds]: String(endsRetryMax),
    [ENV.repairDelaySeconds]: String(repairDelay),
  });

  it('accepting a repair delay of the longest retry of ends plus the margin', () => {
    expect(loadConfig(timing(20, 20 + REPAIR_DELAY_MARGIN_SECONDS))).toMatchObject({
      endsRetryMaxSeconds: 20,
      repairDelaySeconds: 20 + REPAIR_DELAY_MARGIN_SECONDS,
    });
  });

  it('rejecting a shorter one, naming both variables', () => {
    const { message } = configError(timing(20, 20 + REPAIR_DELAY_MARGIN_SECONDS - 1));
    expect(message).toContain(ENV.repairDelaySeconds);
    expect(message).toContain(ENV.endsRetryMaxSeconds);
  });
});

describe('configToEnv', () => {
  it('gives back the same config through the environment', () => {
    const config = loadConfig(customEnv());
    expect(configToEnv(config)).toMatchObject(customEnv());
    expect(loadConfig(configToEnv(config))).toEqual(config);
  });

  it('gives back the default config, leaving unset endpoints out', () => {
    const config = loadConfig(requiredEnv());
    const env = configToEnv(config);
    expect(env).not.toHaveProperty(ENV.messagingEndpoint);
    expect(env).not.toHaveProperty(ENV.dynamodbEndpoint);
    expect(loadConfig(env)).toEqual(config);
  });

  it('sets every variable of ENV when every setting has a value', () => {
    expect(Object.keys(configToEnv(loadConfig(customEnv()))).sort()).toEqual(Object.values(ENV).sort());
  });
});
