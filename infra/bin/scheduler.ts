import { App } from 'aws-cdk-lib';
import { schedulerStackName, schedulerStackPropsFromContext } from '../src/cdk/context.js';
import { SchedulerStack } from '../src/cdk/scheduler-stack.js';

// Environment-agnostic: the account and region are those of the credentials `cdk deploy` runs with.
const app = new App();
new SchedulerStack(app, schedulerStackName(app.node), schedulerStackPropsFromContext(app.node));
