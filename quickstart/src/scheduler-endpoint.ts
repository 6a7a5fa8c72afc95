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

export interface SchedulerLocation {
  readonly outputs?: string | undefined;
  readonly 'stack-outputs'?: string | undefined;
  readonly 'input-topic-arn'?: string | undefined;
  readonly 'emitter-role-arn'?: string | undefined;
  readonly region?: string | undefined;
}

/** The default near-path window, for a deployed stack known only by its ARNs. */
const AWS_NEAR_PATH_WINDOW_SECONDS = 600;
/** The emulators take any keys; these never leave the machine. */
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

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

/**
 * Where the scheduler is: a deployed stack (by ARNs or by the CDK outputs file) or, by
 * default, the local service's outputs file.
 */
export async function resolveScheduler(location: SchedulerLocation, read: (path: string) => Promise<string>): Promise<SchedulerEndpoint> {
  let inputTopicArn = location['input-topic-arn'];
  let emitterRoleArn = location['emitter-role-arn'];
  let nearPathWindowSeconds = AWS_NEAR_PATH_WINDOW_SECONDS;
  if (location['stack-outputs']) {
    const outputs = JSON.parse(await read(location['stack-outputs'])) as Record<string, Record<string, string>>;
    inputTopicArn ??= stackOutput(outputs, 'InputTopicArn');
    emitterRoleArn ??= stackOutput(outputs, 'EmitterRoleArn');
    nearPathWindowSeconds = Number(stackOutput(outputs, 'NearPathWindowSeconds') ?? nearPathWindowSeconds);
  }
  if (inputTopicArn || emitterRoleArn) {
    if (!inputTopicArn || !emitterRoleArn) throw new Error('a deployed scheduler needs both the input topic ARN and the emitter role ARN');
    const region = location.region ?? regionOfArn(inputTopicArn) ?? process.env.AWS_REGION ?? 'us-east-1';
    return { region, endpoint: undefined, credentials: undefined, inputTopicArn, emitterRoleArn, nearPathWindowSeconds };
  }
  const path = location.outputs ?? '.local/outputs.json';
  let text: string;
  try {
    text = await read(path);
  } catch {
    throw new Error(`${path} not found: start the local service first (scripts/start), or pass a deployed stack's outputs`);
  }
  const local = JSON.parse(text) as { region: string; endpoint: string; inputTopicArn: string; emitterRoleArn: string; nearPathWindowSeconds: number };
  return { ...local, credentials: LOCAL_CREDENTIALS };
}
