import { describe, expect, it } from 'vitest';
import { parseCli, LoadTestUsageError } from '../src/options.js';
import { runLabels, scheduleRequest } from '../src/plan.js';

describe('parseCli', () => {
  it('applies the defaults of the scenario named', () => {
    expect(parseCli(['steady'])?.params).toMatchObject({ events: 2_000, seconds: 60 });
    expect(parseCli(['hotspot'])?.params).toMatchObject({ events: 10_000, seconds: 1 });
    expect(parseCli(['far'])?.params).toMatchObject({ events: 100_000, windowSeconds: 240, loaderIntervalSeconds: 90 });
    expect(parseCli(['backlog'])?.params).toMatchObject({ backlog: 1_000_000 });
    expect(parseCli(['listing'])?.params).toMatchObject({ events: 1_000_000 });
    expect(parseCli(['fairness'])?.params).toMatchObject({ events: 10_000, quietEvents: 10, seconds: 1, aheadSeconds: 60 });
    expect(parseCli(['neighbour'])?.params).toMatchObject({ events: 50_000, quietEvents: 1_000, seconds: 60, aheadSeconds: 30 });
  });

  it('runs the chaos scenario with a spike, five kills and 3% of calls failing, from a seed it reports', () => {
    const params = parseCli(['chaos'])?.params;
    expect(params).toMatchObject({
      events: 3_000,
      seconds: 180,
      spikeEvents: 3_000,
      kills: 5,
      faultRate: 0.03,
      windowSeconds: 60,
      loaderIntervalSeconds: 10,
    });
    expect(Number.isInteger(params?.seed)).toBe(true);
    expect(parseCli(['chaos', '--kills', '7', '--fault-rate', '0.1', '--spike', '0', '--seed', '12'])?.params).toMatchObject({
      kills: 7,
      faultRate: 0.1,
      spikeEvents: 0,
      seed: 12,
    });
    expect(parseCli(['chaos'])?.measure.drainSeconds).toBe(180);
  });

  it('refuses a chaos run it could not kill, or faults beyond half the calls', () => {
    expect(() => parseCli(['chaos', '--service', 'in-process'])).toThrow(/child/);
    expect(() => parseCli(['chaos', '--service', 'external'])).toThrow(LoadTestUsageError);
    expect(() => parseCli(['chaos', '--region', 'r', '--input-topic-arn', 'a', '--emitter-role-arn', 'b'])).toThrow(LoadTestUsageError);
    expect(() => parseCli(['chaos', '--fault-rate', '0.6'])).toThrow(/--fault-rate/);
    expect(() => parseCli(['chaos', '--fault-rate', 'lots'])).toThrow(/--fault-rate/);
    expect(() => parseCli(['chaos', '--kills', '-1'])).toThrow(/--kills/);
  });

  it('starts the local service in a child process unless told otherwise', () => {
    expect(parseCli(['steady'])?.service).toMatchObject({ kind: 'child' });
    expect(parseCli(['steady', '--service', 'in-process'])?.service).toMatchObject({ kind: 'in-process' });
  });

  it('targets a deployed stack by its outputs', () => {
    const options = parseCli([
      'steady',
      '--region',
      'eu-west-1',
      '--input-topic-arn',
      'arn:aws:sns:eu-west-1:1:in',
      '--emitter-role-arn',
      'arn:aws:iam::1:role/e',
      '--profile',
      'p',
    ]);
    expect(options?.service).toEqual({
      kind: 'aws',
      region: 'eu-west-1',
      inputTopicArn: 'arn:aws:sns:eu-west-1:1:in',
      emitterRoleArn: 'arn:aws:iam::1:role/e',
      profile: 'p',
    });
  });

  it('refuses what would make a run unbounded, incomplete or misdirected', () => {
    expect(() => parseCli(['steady', '--events', '5000000'])).toThrow(LoadTestUsageError);
    expect(() => parseCli(['steady', '--max-minutes', '500'])).toThrow(LoadTestUsageError);
    expect(() => parseCli(['steady', '--region', 'eu-west-1'])).toThrow(/--input-topic-arn/);
    expect(() => parseCli(['far', '--region', 'r', '--input-topic-arn', 'a', '--emitter-role-arn', 'b'])).toThrow(LoadTestUsageError);
    // The fairness scenario registers its two tenants in the service it starts.
    expect(() => parseCli(['fairness', '--region', 'r', '--input-topic-arn', 'a', '--emitter-role-arn', 'b'])).toThrow(LoadTestUsageError);
    expect(() => parseCli(['fairness', '--service', 'external'])).toThrow(LoadTestUsageError);
    expect(() => parseCli(['fairness', '--quiet-events', '0'])).toThrow(LoadTestUsageError);
    // The neighbour scenario's tenants are registered by whoever starts the service: the harness, or loadtest compare.
    expect(parseCli(['neighbour', '--service', 'external'])?.service.kind).toBe('external');
    expect(() => parseCli(['neighbour', '--region', 'r', '--input-topic-arn', 'a', '--emitter-role-arn', 'b'])).toThrow(
      /runs locally only/,
    );
    expect(() => parseCli(['nonsense'])).toThrow(LoadTestUsageError);
    expect(() => parseCli([])).toThrow(LoadTestUsageError);
  });

  it('gives each published event the labels asked for, up to the 10 a request may carry', () => {
    expect(parseCli(['steady'])?.measure.labels).toBe(0);
    expect(parseCli(['steady', '--labels', '1'])?.measure.labels).toBe(1);
    expect(() => parseCli(['steady', '--labels', '11'])).toThrow(LoadTestUsageError);
    const request = JSON.parse(
      scheduleRequest({ seq: 0, tenant: 'public', clientId: 'c', eventId: 'e', dueAt: 0, publishAt: 0 }, 'u', 'arn', 20, undefined, 2),
    ) as { labels?: string[] };
    expect(request.labels).toEqual(runLabels(2));
    expect(runLabels(2)).toHaveLength(2);
  });

  it('registers tenants before the load only when asked, on a local service, for a scenario whose load is the public tenant’s', () => {
    expect(parseCli(['steady'])?.registeredTenants).toBeUndefined();
    expect(parseCli(['steady', '--registered-tenants', '10000'])?.registeredTenants).toBe(10_000);
    expect(parseCli(['ingest', '--registered-tenants', '5', '--data-dir', '/tmp/d'])).toMatchObject({
      registeredTenants: 5,
      service: { kind: 'child', dataDir: '/tmp/d' },
    });
    // A service started elsewhere is reached through its outputs, and its registry through its tenants file.
    expect(parseCli(['steady', '--service', 'external', '--registered-tenants', '5'])?.service).toEqual({
      kind: 'external',
      outputsFile: '.local/outputs.json',
      tenantsFile: '.local/tenants.json',
    });
    expect(parseCli(['steady', '--service', 'external', '--outputs', 'o.json', '--tenants', 't.json'])?.service).toMatchObject({
      outputsFile: 'o.json',
      tenantsFile: 't.json',
    });
    for (const count of ['0', '100001', 'many'])
      expect(() => parseCli(['steady', '--registered-tenants', count])).toThrow(/--registered-tenants must be an integer from 1 to 100000/);
    const aws = ['--region', 'r', '--input-topic-arn', 'a', '--emitter-role-arn', 'b'];
    expect(() => parseCli(['steady', '--registered-tenants', '5', ...aws])).toThrow(/a deployed stack has its own registry/);
    // Their tenants own the emulator's account, which the registered ones may target; a killed service would create every topic again.
    expect(() => parseCli(['fairness', '--registered-tenants', '5'])).toThrow(/own the emulator's account/);
    expect(() => parseCli(['listing', '--registered-tenants', '5'])).toThrow(LoadTestUsageError);
    expect(() => parseCli(['chaos', '--registered-tenants', '5'])).toThrow(/kills and restarts the service/);
  });

  it('returns nothing when help is asked for', () => {
    expect(parseCli(['--help'])).toBeUndefined();
  });
});
