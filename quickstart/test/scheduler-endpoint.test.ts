import { describe, expect, it } from 'vitest';
import { deployedScheduler, localScheduler } from '../src/scheduler-endpoint.js';

const files = (contents: Record<string, string>) => async (path: string) => {
  const text = contents[path];
  if (text === undefined) throw new Error(`ENOENT: ${path}`);
  return text;
};

const INPUT = 'arn:aws:sns:eu-west-1:123456789012:AdhocScheduler-Input';
const ROLE = 'arn:aws:iam::123456789012:role/AdhocScheduler-emitter-eu-west-1';

describe('finding the scheduler', () => {
  it('reads a deployed stack from the file cdk deploy writes, region from the topic ARN', async () => {
    const outputs = JSON.stringify({ AdhocScheduler: { InputTopicArn: INPUT, EmitterRoleArn: ROLE, NearPathWindowSeconds: '300' } });
    const scheduler = await deployedScheduler({ 'stack-outputs': 'cdk-outputs.json' }, files({ 'cdk-outputs.json': outputs }));
    expect(scheduler).toEqual({
      region: 'eu-west-1',
      endpoint: undefined,
      credentials: undefined,
      inputTopicArn: INPUT,
      emitterRoleArn: ROLE,
      nearPathWindowSeconds: 300,
    });
  });

  it('takes ARNs given directly, with an explicit region over the ARN', async () => {
    const scheduler = await deployedScheduler({ 'input-topic-arn': INPUT, 'emitter-role-arn': ROLE, region: 'us-west-2' }, files({}));
    expect(scheduler?.region).toBe('us-west-2');
    expect(scheduler?.endpoint).toBeUndefined();
  });

  it('refuses half a deployed scheduler, and names a stack outputs file that is missing', async () => {
    await expect(deployedScheduler({ 'input-topic-arn': INPUT }, files({}))).rejects.toThrow(/both/);
    await expect(deployedScheduler({ 'stack-outputs': 'cdk-outputs.json' }, files({}))).rejects.toThrow(/^cdk-outputs.json not found/);
    expect(await deployedScheduler({}, files({}))).toBeUndefined();
  });

  it('reads the local service with local credentials; no file is no service, a broken one is named', async () => {
    const local = {
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:4566',
      inputTopicArn: INPUT,
      emitterRoleArn: ROLE,
      nearPathWindowSeconds: 20,
    };
    const scheduler = await localScheduler('outputs.json', files({ 'outputs.json': JSON.stringify({ ...local, tableName: 'events' }) }));
    // The fields only: the SDK marks a credentials object a client is given (`$source`), and the constant is the process's.
    expect(scheduler).toEqual({ ...local, credentials: expect.objectContaining({ accessKeyId: 'local', secretAccessKey: 'local' }) });
    expect(await localScheduler('outputs.json', files({}))).toBeUndefined();
    await expect(localScheduler('outputs.json', files({ 'outputs.json': '{"region":' }))).rejects.toThrow(/^outputs.json is not JSON/);
    await expect(localScheduler('outputs.json', files({ 'outputs.json': '{}' }))).rejects.toThrow(
      /^outputs.json is not an outputs file of scripts\/start/,
    );
  });
});
