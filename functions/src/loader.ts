import { handlers, lambdaHandler } from './handlers.js';

export const handler = lambdaHandler('loader', handlers.loader);
