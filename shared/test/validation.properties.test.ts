import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { REASON } from '../src/domain/reasons.js';
import type { ParseResult } from '../src/domain/validation.js';
import { parse, scheduleRequest, tenant, topicArn } from './factories.js';

/**
 * Properties of the refusal of control characters: `user`, `id` and a pause's `note` are shown to
 * operators as they came (scripts/admin, the console, the logs), so any C0, DEL or C1 character
 * in them, wherever it stands and whatever surrounds it, is refused as CONTROL_CHARACTER naming
 * the field; the same text without it is taken; the payload is never checked.
 *
 * FC_RUNS=<n> runs each property n times instead, for a longer search.
 */
const runs = (usual: number) => ({ numRuns: Number(process.env.FC_RUNS) || usual });

const isControl = (code: number) => code <= 0x1f || (code >= 0x7f && code <= 0x9f);
const control = fc.oneof(fc.integer({ min: 0, max: 0x1f }), fc.integer({ min: 0x7f, max: 0x9f })).map((code) => String.fromCharCode(code));
/** Well-formed text without control characters, astral characters among it: what a field may hold. */
const clean = fc.string({ unit: 'binary', maxLength: 40 }).filter((text) => ![...text].some((char) => isControl(char.codePointAt(0) ?? 0)));
/** What a publisher would plant: a lone control character, or a whole sequence (a colour, an OSC link, a C1 CSI clearing the screen). */
const sequence = fc.oneof(control, fc.constantFrom('\u001b[31m', '\u001b]8;;https://example.com\u0007', '\u009b2J', '\r\n'));
/** Clean text with control characters planted in it, within the 256 characters the schema allows. */
const planted = fc
  .tuple(clean, fc.array(sequence, { minLength: 1, maxLength: 4 }), clean)
  .map(([before, controls, after]) => `${before}${controls.join('')}${after}`);

const ACME = tenant('acme');
const acmeTarget = topicArn('out', undefined, '111111111111');

/** The requests that carry each field, as the tenant acme sends them on its own topic. */
const REQUESTS = {
  user: (text: string) => scheduleRequest({ target: acmeTarget, user: text }),
  id: (text: string) => scheduleRequest({ target: acmeTarget, id: text }),
  note: (text: string) => ({ action: 'pause', note: text }),
} as const;
const field = fc.constantFrom(...(Object.keys(REQUESTS) as (keyof typeof REQUESTS)[]));

const parsed = (request: unknown): ParseResult => parse(JSON.stringify(request), ACME);

describe('control characters in text shown to operators', () => {
  it('are refused as CONTROL_CHARACTER, naming the field, wherever they stand', () => {
    fc.assert(
      fc.property(field, planted, (name, text) => {
        const result = parsed(REQUESTS[name](text));
        expect(result.accepted).toBe(false);
        if (result.accepted) return;
        expect(result.error.reason).toBe(REASON.CONTROL_CHARACTER);
        expect(result.error.details).toMatchObject({ field: name });
      }),
      runs(300),
    );
  });

  it('are the only reason: the same text without them is taken', () => {
    fc.assert(
      fc.property(
        field,
        clean.filter((text) => text.length > 0),
        (name, text) => {
          expect(parsed(REQUESTS[name](text)).accepted).toBe(true);
        },
      ),
      runs(300),
    );
  });

  it('are never looked for in the payload, which is delivered byte for byte', () => {
    fc.assert(
      fc.property(planted, (payload) => {
        const result = parsed(scheduleRequest({ target: acmeTarget, payload }));
        expect(result.accepted && result.request.kind === 'schedule' && result.request.event.payload).toBe(payload);
      }),
      runs(200),
    );
  });
});
