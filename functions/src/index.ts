/**
 * What the workspace's other packages may use of functions: the handlers (handlers.ts), the
 * dependencies they are bound to and the SDK clients behind them (dependencies.ts). The Lambda
 * entry files are bundled by path, not imported.
 */
export { bindHandler, handlers, type FunctionName } from './handlers.js';
export { createAwsClients, createDependencies, type AwsClients } from './dependencies.js';
export { LISTING_PROPERTY, REGISTRY_PROPERTY, writeRegistryResource } from './registry-resource.js';
