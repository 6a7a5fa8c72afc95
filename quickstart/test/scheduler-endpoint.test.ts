import { describe, expect, it } from 'vitest';
import { resolveScheduler } from '../src/scheduler-endpoint.js';

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
    const scheduler = await resolveScheduler({ 'stack-outputs': 'cdk-outputs.json' }, files({ 'cdk-outputs.json': outputs }));
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
    const scheduler = await resolveScheduler({ 'input-topic-arn': INPUT, 'emitter-role-arn': ROLE, region: 'us-west-2' }, files({}));
    expect(scheduler.region).toBe('us-west-2');
    expect(scheduler.endpoint).toBeUndefined();
  });

  it('refuses half a deployed scheduler', async () => {
    await expect(resolveScheduler({ 'input-topic-arn': INPUT }, files({}))).rejects.toThrow(/both/);
  });

  it('defaults to the local service, with local credentials, and says how to start it when absent', async () => {
    const local = { region: 'us-east-1', endpoint: 'http://127.0.0.1:4566', inputTopicArn: INPUT, emitterRoleArn: ROLE, nearPathWindowSeconds: 20 };
    const scheduler = await resolveScheduler({}, files({ '.local/outputs.json': JSON.stringify(local) }));
    expect(scheduler).toMatchObject({ ...local, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    await expect(resolveScheduler({}, files({}))).rejects.toThrow(/scripts\/start/);
  });
});
