// Lint fixture (see floating-promise.ts): one import through an entry shared exports, one into
// its src/ by name, one by a path into it. lint.test.ts expects the last two refused.
import { ENV } from '@adhoc-scheduler/shared/config';
// @ts-expect-error: shared's package.json does not export the file either, so TypeScript refuses it too.
import { EMISSION_ATTRIBUTE } from '@adhoc-scheduler/shared/domain/event';
import { loadConfig } from '../../../../shared/src/config.js';

export const imported = [ENV, EMISSION_ATTRIBUTE, loadConfig];
