import { handlers, lambdaHandler } from './handlers.js';

export const handler = lambdaHandler('loading', handlers.loading);
