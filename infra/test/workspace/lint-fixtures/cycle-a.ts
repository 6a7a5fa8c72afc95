// Lint fixture (see floating-promise.ts): cycle-a.ts and cycle-b.ts import each other, a circle
// lint.test.ts expects the linter to refuse in both.
import { b } from './cycle-b.js';

export const a = (): string => `a${b.length}`;
