import { describe, expect, it } from 'vitest';
import { leftoversLastSeconds, registrationRefusal, tenantRemoval } from '../src/domain/tenant-removal.js';

const DAY = 24 * 3600;
const REMOVED_AT = Date.UTC(2026, 11, 1, 12);

describe('a removed tenant', () => {
  it('keeps its id for as long as the longest of what it left: its records, or its dead letters', () => {
    expect(leftoversLastSeconds({ retentionSeconds: 7 * DAY, deadLetterRetentionSeconds: 14 * DAY })).toBe(14 * DAY);
    expect(leftoversLastSeconds({ retentionSeconds: 30 * DAY, deadLetterRetentionSeconds: 14 * DAY })).toBe(30 * DAY);
    const removal = tenantRemoval('acme', REMOVED_AT, { retentionSeconds: 7 * DAY, deadLetterRetentionSeconds: 14 * DAY });
    expect(removal).toEqual({ tenant: 'acme', removedAt: REMOVED_AT, reusableFrom: REMOVED_AT + 14 * DAY * 1000 });
  });

  it('refuses its id to a new registration until then, naming when, and admits a restore at any time', () => {
    const removal = tenantRemoval('acme', REMOVED_AT, { retentionSeconds: 7 * DAY, deadLetterRetentionSeconds: 14 * DAY });
    const refusal = registrationRefusal(removal, removal.reusableFrom - 1, false);
    expect(refusal).toContain('tenant "acme" was removed at 2026-12-01T12:00:00.000Z');
    expect(refusal).toContain('stands until 2026-12-15T12:00:00.000Z');
    expect(refusal).toContain('--restore');
    expect(registrationRefusal(removal, REMOVED_AT, true)).toBeUndefined();
    expect(registrationRefusal(removal, removal.reusableFrom, false)).toBeUndefined();
    expect(registrationRefusal(undefined, REMOVED_AT, false)).toBeUndefined();
  });
});
