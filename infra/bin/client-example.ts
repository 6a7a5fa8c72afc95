import { App } from 'aws-cdk-lib';
import {
  ClientExampleStack,
  clientExampleStackPropsFromContext,
  DEFAULT_CLIENT_EXAMPLE_STACK_NAME,
} from '../src/cdk/client-example/client-example-stack.js';
import { contextString, SCHEDULER_CONTEXT } from '../src/cdk/context.js';

// Deployed by a client, in the client's own account, after the scheduler exists.
const app = new App();
new ClientExampleStack(
  app,
  contextString(app.node, SCHEDULER_CONTEXT.stackName) ?? DEFAULT_CLIENT_EXAMPLE_STACK_NAME,
  clientExampleStackPropsFromContext(app.node),
);
