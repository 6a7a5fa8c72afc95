// Lint fixture: the other half of cycle-a.ts's circle.
import { a } from './cycle-a.js';

export const b = 'b';
export const callA = (): string => a();
