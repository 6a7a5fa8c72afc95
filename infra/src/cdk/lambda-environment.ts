import { Stack, Token } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** Lambda refuses a function whose variables, names and values together, exceed 4 KB. */
export const LAMBDA_ENVIRONMENT_LIMIT_BYTES = 4096;

/**
 * What one CloudFormation reference or attribute in a value is counted as: more than the
 * longest name or URL it stands for here (DynamoDB table names have at most 255 characters,
 * SQS queue URLs about 150).
 */
export const TOKEN_ESTIMATE_BYTES = 256;

/** References whose values have a known length, counted at that length: an account id has 12 digits. */
const KNOWN_LENGTHS: Readonly<Record<string, number>> = { 'AWS::AccountId': 12 };

export class LambdaEnvironmentTooLargeError extends Error {
  override readonly name = 'LambdaEnvironmentTooLargeError';
}

/**
 * An upper estimate of the environment's size as Lambda counts it: the variables as JSON
 * (names, values, quotes and escapes, which is more than names and values alone), the literal
 * parts of joined values as they are, and each reference counted at TOKEN_ESTIMATE_BYTES.
 */
export function estimatedEnvironmentBytes(scope: IConstruct, environment: Readonly<Record<string, string>>): number {
  return jsonBytes(estimatedValues(scope, environment));
}

/** Fails synth, naming the limit and the largest variable, when Lambda might refuse the environment. */
export function assertEnvironmentFits(scope: IConstruct, environment: Readonly<Record<string, string>>): void {
  const values = estimatedValues(scope, environment);
  const total = jsonBytes(values);
  if (total <= LAMBDA_ENVIRONMENT_LIMIT_BYTES) return;
  const [largestName, largestBytes] = Object.entries(values)
    // Without the braces of the object around it.
    .map(([name, value]): [string, number] => [name, jsonBytes({ [name]: value }) - 2])
    .reduce((largest, entry) => (entry[1] > largest[1] ? entry : largest));
  throw new LambdaEnvironmentTooLargeError(
    `${scope.node.path}: its environment would take up to ${total} bytes, over Lambda's limit of 4 KB ` +
      `(${LAMBDA_ENVIRONMENT_LIMIT_BYTES} bytes) for all variables together; the largest is ${largestName} (${largestBytes} bytes)`,
  );
}

function estimatedValues(scope: IConstruct, environment: Readonly<Record<string, string>>): Record<string, string> {
  const stack = Stack.of(scope);
  return Object.fromEntries(
    Object.entries(environment).map(([name, value]) => [name, Token.isUnresolved(value) ? rendered(stack.resolve(value)) : value]),
  );
}

/** A resolved value with every reference replaced by TOKEN_ESTIMATE_BYTES characters (or its known length). */
function rendered(resolved: unknown): string {
  if (typeof resolved === 'string') return resolved;
  const join = (resolved as { 'Fn::Join'?: unknown } | null)?.['Fn::Join'];
  if (Array.isArray(join) && typeof join[0] === 'string' && Array.isArray(join[1])) return join[1].map(rendered).join(join[0]);
  const ref = (resolved as { Ref?: unknown } | null)?.Ref;
  return 'x'.repeat((typeof ref === 'string' ? KNOWN_LENGTHS[ref] : undefined) ?? TOKEN_ESTIMATE_BYTES);
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}
