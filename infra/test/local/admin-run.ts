import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { runAdmin } from '../../src/admin/cli.js';
import { LOCAL_CREDENTIALS } from '../../src/local/runtime.js';

export const REPO_ROOT = resolve(import.meta.dirname, '../../..');

export interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A command line run in this process, as scripts/admin runs it. */
export async function admin(...argv: string[]): Promise<Run> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await runAdmin(argv, { out: (text) => stdout.push(text), err: (text) => stderr.push(text) });
  return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
}

/** A command line run through the launcher operators use. */
export function adminScript(argv: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<Run> {
  return new Promise((done) => {
    execFile(
      join(REPO_ROOT, 'scripts/admin'),
      argv,
      { cwd: REPO_ROOT, env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
      },
    );
  });
}

/**
 * The AWS SDK's own environment for a command run as on a deployed stack, against the local
 * service's emulators: keys, and endpoint overrides of SNS, SQS and DynamoDB, stand in for an
 * AWS account and its region's endpoints.
 */
export function deployedSdkEnvironment(outputs: {
  readonly endpoint: string;
  readonly dynamodbEndpoint: string;
}): Readonly<Record<string, string>> {
  return {
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_SNS: outputs.endpoint,
    AWS_ENDPOINT_URL_SQS: outputs.endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: outputs.dynamodbEndpoint,
  };
}
