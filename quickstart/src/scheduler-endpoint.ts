import { DEFAULTS } from '@adhoc-scheduler/shared/config';
import { LOCAL_CREDENTIALS } from '@adhoc-scheduler/shared/local-service-access';

/** What a client needs to know about a scheduler: where to publish and whom to let publish back. */
export interface SchedulerEndpoint {
  readonly region: string;
  /** Set for the local service; undefined on AWS. */
  readonly endpoint: string | undefined;
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string } | undefined;
  readonly inputTopicArn: string;
  readonly emitterRoleArn: string;
  readonly nearPathWindowSeconds: number;
}

export interface DeployedLocation {
  readonly 'stack-outputs'?: string | undefined;
  readonly 'input-topic-arn'?: string | undefined;
  readonly 'emitter-role-arn'?: string | undefined;
  readonly region?: string | undefined;
}

function regionOfArn(arn: string): string | undefined {
  return arn.split(':')[3] || undefined;
}

/** Finds an output whose key ends with `suffix` in `cdk deploy --outputs-file` JSON ({stack: {key: value}}). */
function stackOutput(outputs: Record<string, Record<string, string>>, suffix: string): string | undefined {
  for (const stack of Object.values(outputs)) {
    for (const [key, value] of Object.entries(stack)) if (key.toLowerCase().endsWith(suffix.toLowerCase())) return value;
  }
  return undefined;
}

/** A file's text; undefined when it cannot be read (absent). */
async function readIfThere(path: string, read: (path: string) => Promise<string>): Promise<string | undefined> {
  try {
    return await read(path);
  } catch {
    return undefined;
  }
}

function parseJson(path: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${path} is not JSON (${(error as Error).message})`);
  }
}

/** A deployed stack, by its ARNs or by the CDK outputs file; undefined when the location names none. */
export async function deployedScheduler(
  location: DeployedLocation,
  read: (path: string) => Promise<string>,
): Promise<SchedulerEndpoint | undefined> {
  let inputTopicArn = location['input-topic-arn'];
  let emitterRoleArn = location['emitter-role-arn'];
  // A deployed stack known only by its ARNs has the default near-path window.
  let nearPathWindowSeconds: number = DEFAULTS.nearPathWindowSeconds;
  if (location['stack-outputs']) {
    const path = location['stack-outputs'];
    const text = await readIfThere(path, read);
    if (text === undefined) throw new Error(`${path} not found: cdk deploy --outputs-file writes it`);
    const outputs = parseJson(path, text) as Record<string, Record<string, string>>;
    inputTopicArn ??= stackOutput(outputs, 'InputTopicArn');
    emitterRoleArn ??= stackOutput(outputs, 'EmitterRoleArn');
    nearPathWindowSeconds = Number(stackOutput(outputs, 'NearPathWindowSeconds') ?? nearPathWindowSeconds);
  }
  if (!inputTopicArn && !emitterRoleArn) return undefined;
  if (!inputTopicArn || !emitterRoleArn) throw new Error('a deployed scheduler needs both the input topic ARN and the emitter role ARN');
  const region = location.region ?? regionOfArn(inputTopicArn) ?? process.env.AWS_REGION ?? 'us-east-1';
  return { region, endpoint: undefined, credentials: undefined, inputTopicArn, emitterRoleArn, nearPathWindowSeconds };
}

/** What the quickstart uses of the outputs file scripts/start writes. */
interface LocalOutputs {
  readonly region: string;
  readonly endpoint: string;
  readonly inputTopicArn: string;
  readonly emitterRoleArn: string;
  readonly nearPathWindowSeconds: number;
}

/** The local service of an outputs file, with local credentials; undefined when there is no such file. */
export async function localScheduler(
  path: string,
  read: (path: string) => Promise<string>,
): Promise<(SchedulerEndpoint & { readonly endpoint: string }) | undefined> {
  const text = await readIfThere(path, read);
  if (text === undefined) return undefined;
  const { region, endpoint, inputTopicArn, emitterRoleArn, nearPathWindowSeconds } = (parseJson(path, text) ?? {}) as Partial<
    Record<keyof LocalOutputs, unknown>
  >;
  if (
    typeof region !== 'string' ||
    typeof endpoint !== 'string' ||
    typeof inputTopicArn !== 'string' ||
    typeof emitterRoleArn !== 'string' ||
    typeof nearPathWindowSeconds !== 'number'
  ) {
    throw new Error(
      `${path} is not an outputs file of scripts/start (region, endpoint, inputTopicArn, emitterRoleArn or nearPathWindowSeconds is missing)`,
    );
  }
  return { region, endpoint, inputTopicArn, emitterRoleArn, nearPathWindowSeconds, credentials: LOCAL_CREDENTIALS };
}
