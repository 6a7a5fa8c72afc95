/**
 * CloudFormation resources and outputs of the scheduler's stack with no tenant in its context, and
 * what each tenant there adds: its topic, the topic's policy and its subscription, and an output
 * (its topic's ARN). The capacity model (loadtest/src/capacity/model.ts) counts with them, and
 * infra/test/cdk/capacity-alarms.test.ts keeps them true to the template `cdk synth` writes.
 */
export const STACK_COUNTS = { resources: 92, resourcesPerTenant: 3, outputs: 21, outputsPerTenant: 1 } as const;
