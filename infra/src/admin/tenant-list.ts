import { describeError } from '@adhoc-scheduler/shared/describe-error';
import { commandLine, LOCATION_OPTIONS, noPositionals } from './arguments.js';
import type { Output } from './format.js';
import { pageLimit } from './listing-options.js';
import { readLocalOutputs } from './local-outputs.js';
import { locationOf, readStackOutputs, type Location } from './location.js';
import { pausesAt } from './pause-commands.js';
import { pageOfTenantsAt } from './registry.js';
import { refuseTenantsFile } from './tenant-place.js';
import { inputTopicArnOf } from './topic-arns.js';
import { tenantsJson, tenantsTable } from './tenant-view.js';
import { LIST_LIMIT, USAGE } from './usage.js';

/** The shared input topic's ARN at a location (the tenants' follow from it), or why it is unknown. */
export async function publicInputTopicArn(location: Location): Promise<{ readonly arn: string } | { readonly unknown: string }> {
  if (location.kind === 'local') {
    // The registry is the file; the topic ARNs need the service's outputs, which exist once it has run.
    try {
      return { arn: (await readLocalOutputs(location.outputs)).inputTopicArn };
    } catch (error) {
      return { unknown: describeError(error) };
    }
  }
  if (location.stackOutputs === undefined) return { unknown: 'name the stack with --stack-outputs FILE to see them' };
  const { inputTopicArn } = await readStackOutputs(location.stackOutputs);
  return inputTopicArn === undefined ? { unknown: `${location.stackOutputs} has no InputTopicArn output` } : { arn: inputTopicArn };
}

export async function tenantList(args: string[], output: Output): Promise<number> {
  const command = 'tenant list';
  const line = commandLine(
    command,
    args,
    {
      json: { type: 'boolean', default: false },
      tenants: { type: 'string' },
      prefix: { type: 'string' },
      account: { type: 'string' },
      limit: { type: 'string', default: String(LIST_LIMIT.default) },
      after: { type: 'string' },
      ...LOCATION_OPTIONS,
    },
    { usage: USAGE.tenantList, output },
  );
  if (line === undefined) return 0;
  const { values, positionals } = line;
  noPositionals(positionals, command);
  const limit = pageLimit(values.limit, command);
  const location = locationOf(values, command);
  if (location.kind === 'deployed') refuseTenantsFile(values.tenants, command);
  const publicTopic = await publicInputTopicArn(location);
  if ('unknown' in publicTopic) output.err(`Input topic ARNs unknown: ${publicTopic.unknown}`);
  // The registry in force, a page from the table: the same reads whatever the registry's size.
  const { tenants, next } = await pageOfTenantsAt(location, { prefix: values.prefix, account: values.account, after: values.after, limit });
  // The pauses of this page's tenants only: a page costs the same reads however many are registered.
  const paused = await pausesAt(
    location,
    tenants.map(({ id }) => id),
  );
  if ('unknown' in paused) output.err(`Pauses unknown: ${paused.unknown}`);
  const views = tenants.map((tenant) => ({
    tenant,
    inputTopicArn: 'arn' in publicTopic ? inputTopicArnOf(publicTopic.arn, tenant.id) : undefined,
    pause: 'pauses' in paused ? paused.pauses.get(tenant.id) : undefined,
  }));
  if (values.json) output.out(JSON.stringify({ ...tenantsJson(views), next: next ?? null }, null, 2));
  else {
    output.out(views.length === 0 ? 'no tenant matches' : tenantsTable(views));
    if (next !== undefined) output.out(`next page: --after ${next}`);
  }
  return 0;
}
