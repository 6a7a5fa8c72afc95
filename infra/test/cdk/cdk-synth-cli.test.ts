import { execFile } from 'node:child_process';
import { REGISTRY_PROPERTY } from '@adhoc-scheduler/functions';
import type { TenantsDocument } from '@adhoc-scheduler/shared';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CLIENT_EXAMPLE_STACK_NAME } from '../../src/cdk/client-example/client-example-stack.js';
import { REPO_ROOT, SCHEDULER_FUNCTIONS } from '../../src/cdk/paths.js';
import { DEFAULT_SCHEDULER_STACK_NAME, SCHEDULER_OUTPUTS, tenantInputTopicOutputKey } from '../../src/cdk/scheduler-stack.js';
import { DEAD_LETTER_SOURCES, queueOutputKeys } from '../../src/cdk/stack-outputs.js';

const run = promisify(execFile);
const INFRA_DIR = join(REPO_ROOT, 'infra');
const CDK_CLI = join(INFRA_DIR, 'node_modules', '.bin', 'cdk');

interface LambdaResource {
  readonly Type: string;
  readonly Properties: {
    readonly Runtime: string;
    readonly Architectures: string[];
    readonly Environment: { readonly Variables: Record<string, unknown> };
  };
  readonly Metadata: { readonly 'aws:asset:path': string };
}

const TENANTS: TenantsDocument = { tenants: [{ id: 'acme-corp', accounts: ['111111111111'] }] };

let workDir: string;

/** The environment of a machine with no AWS credentials, no AWS config and no metadata service. */
function offlineEnvironment(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_') && !name.startsWith('CDK_')));
  return {
    ...env,
    PATH: [join(INFRA_DIR, 'node_modules', '.bin'), join(REPO_ROOT, 'node_modules', '.bin'), env.PATH].join(delimiter),
    AWS_CONFIG_FILE: join(workDir, 'no-aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(workDir, 'no-aws-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
    CDK_DISABLE_VERSION_CHECK: 'true',
    CDK_DISABLE_CLI_TELEMETRY: 'true',
  };
}

/** `cdk synth` as a user runs it (from infra/, with cdk.json), into its own output directory. */
async function synth(outputName: string, args: readonly string[] = []): Promise<string> {
  const output = join(workDir, outputName);
  try {
    await run(CDK_CLI, ['synth', '--quiet', '--no-notices', '--output', output, ...args], { cwd: INFRA_DIR, env: offlineEnvironment() });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`cdk synth failed:\n${stderr ?? ''}\n${stdout ?? ''}`, { cause: error });
  }
  return output;
}

interface SynthesizedTemplate {
  readonly Resources: Record<string, { readonly Type: string; readonly Properties: Record<string, unknown> }>;
  readonly Outputs: Record<string, unknown>;
}

function templateOf(output: string, stackName: string): SynthesizedTemplate {
  return JSON.parse(readFileSync(join(output, `${stackName}.template.json`), 'utf8')) as SynthesizedTemplate;
}

/** The stack's own functions: not the custom resources' framework CDK adds (custom-resources' Provider). */
function functionsOf(output: string, stackName: string): LambdaResource[] {
  return Object.entries(templateOf(output, stackName).Resources)
    .filter(([logicalId, resource]) => resource.Type === 'AWS::Lambda::Function' && !logicalId.includes('Providerframework'))
    .map(([, resource]) => resource) as LambdaResource[];
}

/** Loads a bundle as Lambda's Node 24 would, with the AWS SDK the runtime provides, and checks its handler. */
async function loadHandler(bundle: string): Promise<string> {
  const { stdout } = await run(process.execPath, ['-e', 'process.stdout.write(typeof require(process.argv[1]).handler)', bundle], {
    env: { ...offlineEnvironment(), NODE_PATH: join(REPO_ROOT, 'functions', 'node_modules') },
  });
  return stdout;
}

/** How long the three synths below may take together. */
const SYNTHS_TIMEOUT_MS = 240_000;

let schedulerOutput: string;
let tenantsOutput: string;
let clientOutput: string;

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'cdk-synth-'));
  const tenantsFile = join(workDir, 'tenants.json');
  writeFileSync(tenantsFile, JSON.stringify(TENANTS));
  [schedulerOutput, tenantsOutput, clientOutput] = await Promise.all([
    synth('scheduler'),
    // Relative to infra/, where cdk runs the app.
    synth('tenants', ['-c', `tenantsFile=${relative(INFRA_DIR, tenantsFile)}`]),
    synth('client-example', [
      '--app',
      'tsx bin/client-example.ts',
      '-c',
      'emitterRoleArn=arn:aws:iam::123456789012:role/AdhocScheduler-emitter-eu-west-1',
    ]),
  ]);
  // Three synths at once, each bundling every function: over a minute on a 2-core machine busy with the other test files.
}, SYNTHS_TIMEOUT_MS);

afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe('cdk synth, offline and without credentials', () => {
  it('synthesizes the scheduler stack with its outputs', () => {
    const template = templateOf(schedulerOutput, DEFAULT_SCHEDULER_STACK_NAME);
    const queueOutputs = DEAD_LETTER_SOURCES.flatMap((source) => Object.values(queueOutputKeys(source)));
    expect(Object.keys(template.Outputs).sort()).toEqual([...new Set([...Object.values(SCHEDULER_OUTPUTS), ...queueOutputs])].sort());
  });

  it('registers the tenants of a -c tenantsFile: their topics, their outputs and the registry the functions read', () => {
    const template = templateOf(tenantsOutput, DEFAULT_SCHEDULER_STACK_NAME);
    expect(Object.keys(template.Outputs)).toContain(tenantInputTopicOutputKey('acme-corp'));
    const topicNames = Object.values(template.Resources).flatMap((resource) =>
      resource.Type === 'AWS::SNS::Topic' ? [resource.Properties.TopicName] : [],
    );
    expect(topicNames).toEqual(
      expect.arrayContaining([`${DEFAULT_SCHEDULER_STACK_NAME}-input`, `${DEFAULT_SCHEDULER_STACK_NAME}-tenant-acme-corp`]),
    );
    // The registry reaches the functions through the table, written by the registry resource.
    const [registry] = Object.values(templateOf(tenantsOutput, DEFAULT_SCHEDULER_STACK_NAME).Resources).filter(
      (resource) => resource.Type === 'Custom::TenantRegistry',
    );
    expect(JSON.parse(registry?.Properties[REGISTRY_PROPERTY] as string)).toEqual(TENANTS);
  });

  it('bundles each function with esbuild, with a source map, into code that loads on Node 24', async () => {
    const functions = functionsOf(schedulerOutput, DEFAULT_SCHEDULER_STACK_NAME);
    // The five, and the registry's writer.
    expect(functions).toHaveLength(SCHEDULER_FUNCTIONS.length + 1);
    for (const fn of functions) {
      expect(fn.Properties).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'] });
      const assetDir = join(schedulerOutput, fn.Metadata['aws:asset:path']);
      expect(existsSync(join(assetDir, 'index.js.map'))).toBe(true);
      expect(readFileSync(join(assetDir, 'index.js'), 'utf8')).toMatch(/\/\/# sourceMappingURL=index\.js\.map\s*$/);
      expect(await loadHandler(join(assetDir, 'index.js'))).toBe('function');
    }
  });

  it('synthesizes the client example stack with its consumer', async () => {
    const [consumer] = functionsOf(clientOutput, DEFAULT_CLIENT_EXAMPLE_STACK_NAME);
    expect(consumer?.Properties).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'] });
    expect(await loadHandler(join(clientOutput, consumer?.Metadata['aws:asset:path'] ?? '', 'index.js'))).toBe('function');
  });
});
