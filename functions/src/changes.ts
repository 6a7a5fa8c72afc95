import { handlers, lambdaHandler } from './handlers.js';

export const handler = lambdaHandler('changes', handlers.changes);
