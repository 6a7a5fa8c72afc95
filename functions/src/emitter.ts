import { handlers, lambdaHandler } from './handlers.js';

export const handler = lambdaHandler('emitter', handlers.emitter);
