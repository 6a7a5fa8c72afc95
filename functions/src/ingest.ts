import { handlers, lambdaHandler } from './handlers.js';

export const handler = lambdaHandler('ingest', handlers.ingest);
