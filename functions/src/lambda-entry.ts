import { loadConfig } from '@adhoc-scheduler/shared';
import { createAwsClients, createDependencies, type Dependencies } from './wiring.js';

/**
 * Builds a handler's dependencies from the environment on the first invocation and keeps them
 * for the life of the Lambda execution environment.
 */
export function lambdaHandler<E, R>(functionName: string, handle: (deps: Dependencies, event: E) => Promise<R>): (event: E) => Promise<R> {
  let deps: Dependencies | undefined;
  return (event) => {
    if (!deps) {
      const config = loadConfig();
      deps = createDependencies(functionName, config, createAwsClients(config));
    }
    return handle(deps, event);
  };
}
