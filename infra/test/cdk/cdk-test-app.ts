import { App, type Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const CDK_JSON = fileURLToPath(new URL('../../cdk.json', import.meta.url));

/**
 * An app with the same feature flags as `cdk synth` (cdk.json's context). Only the stacks
 * named in `bundledStacks` are bundled with esbuild; the others get placeholder code, so a
 * test file bundles each function once.
 */
export function cdkTestApp(bundledStacks: readonly string[], context: Record<string, unknown> = {}): App {
  const { context: flags } = JSON.parse(readFileSync(CDK_JSON, 'utf8')) as { context: Record<string, unknown> };
  return new App({ context: { ...flags, 'aws:cdk:bundling-stacks': bundledStacks, ...context } });
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * One permission of a role: an action on a resource (an intrinsic like {"Fn::GetAtt": [...]}, or
 * a string), under the statement's condition if it has one, allowed or (`Deny`) refused.
 */
export interface Permission {
  readonly action: string;
  readonly resource: Json;
  readonly condition?: Json;
  readonly effect?: Effect;
}

export type Effect = 'Allow' | 'Deny';

const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/**
 * Every action-resource pair the role's policies allow or deny, with its condition, sorted. Fails
 * on anything that the flat list would misrepresent (NotAction, NotResource, principals).
 */
export function permissionsOf(template: Template, roleLogicalId: string): string[] {
  const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((policy) =>
    (policy.Properties.Roles as Json[]).some((role) => JSON.stringify(role) === JSON.stringify({ Ref: roleLogicalId })),
  );
  const pairs: string[] = [];
  for (const policy of policies) {
    for (const statement of policy.Properties.PolicyDocument.Statement as Record<string, Json>[]) {
      const { Effect: effect, Action, Resource, Condition: condition, ...rest } = statement;
      if ((effect !== 'Allow' && effect !== 'Deny') || Object.keys(rest).length > 0)
        throw new Error(`unexpected statement shape: ${JSON.stringify(statement)}`);
      for (const action of asArray(Action as string | string[])) {
        for (const resource of asArray(Resource as Json)) pairs.push(permissionKey({ action, resource, condition, effect }));
      }
    }
  }
  return pairs.sort();
}

export function permissionKey({ action, resource, condition, effect = 'Allow' }: Permission): string {
  const key = `${effect === 'Deny' ? 'DENY ' : ''}${action} on ${JSON.stringify(resource)}`;
  return condition === undefined ? key : `${key} when ${JSON.stringify(condition)}`;
}

/**
 * Expected permissions, in the same form as permissionsOf: `actions` on each of `resources`, under
 * `condition` if given, allowed unless `effect` says Deny.
 */
export function permissions(
  stack: Stack,
  ...grants: [actions: string[], resources: string[], condition?: Json, effect?: Effect][]
): string[] {
  return grants
    .flatMap(([actions, resources, condition, effect]) =>
      actions.flatMap((action) =>
        resources.map((resource) => permissionKey({ action, resource: stack.resolve(resource) as Json, condition, effect })),
      ),
    )
    .sort();
}

/**
 * A Fn::Join of literals and references as one string, each reference written as
 * `{Ref:X}` / `{X.Attr}` (or as `ref` writes it): enough to read a dashboard body as JSON.
 */
export function joinedText(value: Json, ref: (id: string) => string = (id) => `{Ref:${id}}`): string {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const join = value['Fn::Join'];
    if (Array.isArray(join)) return (join[1] as Json[]).map((part) => joinedText(part, ref)).join(join[0] as string);
    if (typeof value.Ref === 'string') return ref(value.Ref);
    const getAtt = value['Fn::GetAtt'];
    if (Array.isArray(getAtt)) return `{${getAtt.join('.')}}`;
  }
  throw new Error(`cannot read ${JSON.stringify(value)} as text`);
}

/** The account and region the tests take a stack to be deployed in. */
export const DEPLOYED_ACCOUNT = '123456789012';
export const DEPLOYED_REGION = 'eu-west-1';

/**
 * A function's environment as Lambda would see it once deployed: the pseudo parameters and
 * topics' ARNs as CloudFormation resolves them, other references as `{Ref:X}` (enough for a name
 * or a URL that is only checked to be set).
 */
export function deployedEnvironment(template: Template, variables: Readonly<Record<string, Json>>): Record<string, string> {
  const resources = template.toJSON().Resources as Record<string, { Type: string; Properties?: { TopicName?: string } }>;
  const pseudo: Readonly<Record<string, string>> = {
    'AWS::AccountId': DEPLOYED_ACCOUNT,
    'AWS::Region': DEPLOYED_REGION,
    'AWS::Partition': 'aws',
  };
  const ref = (id: string): string => {
    const resource = resources[id];
    if (resource?.Type === 'AWS::SNS::Topic')
      return `arn:aws:sns:${DEPLOYED_REGION}:${DEPLOYED_ACCOUNT}:${resource.Properties?.TopicName ?? id}`;
    return pseudo[id] ?? `{Ref:${id}}`;
  };
  return Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, joinedText(value, ref)]));
}
