import { lambdaHandler } from './lambda-entry.js';
import { handlers } from './handlers.js';

export const handler = lambdaHandler('loader', handlers.loader);
