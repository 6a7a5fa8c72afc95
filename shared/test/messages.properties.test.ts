import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ScheduledEvent } from '../src/domain/event.js';
import type { EmissionEnding } from '../src/domain/emission.js';
import type { FailureNotice } from '../src/domain/failure.js';
import {
  decodeChangeJob,
  decodeDelayQueueMessage,
  decodeLoadingChunk,
  encodeChangeJob,
  encodeDelayQueueMessage,
  encodeNoticePack,
  encodeLoadingChunk,
  type ChangeJob,
  type DelayQueueMessage,
  type NoticeMessage,
  type LoadingChunk,
} from '../src/domain/messages.js';
import { REASON } from '../src/domain/reasons.js';

/**
 * Properties of the decoders of the scheduler's own queues: whatever a well-formed message
 * holds, it decodes to what was encoded; a body with any one required field removed, or of the
 * wrong type, is refused with the decoder's own TypeError (never half-decoded, never a crash
 * inside it); an optional field absent or mistyped decodes to its fallback. Each generated
 * message is corrupted field by field, every field and every wrong value, so what a run checks
 * does not depend on which fields fast-check happens to pick.
 *
 * FC_RUNS=<n> runs each property n times instead, for a longer search.
 */
const runs = (usual: number) => ({ numRuns: Number(process.env.FC_RUNS) || usual });

type Path = readonly (string | number)[];
type Json = Record<string, unknown>;

/** A field of a body, with values of the wrong type for it. */
interface Field {
  readonly path: Path;
  readonly wrong: readonly unknown[];
}

const NOT_STRING = [1, true, null, {}, []];
const NOT_NUMBER = ['1', true, null, {}, []];
const NOT_ARRAY = ['x', 1, null, {}];
/** `null` is left out where the decoder reads the field's own fields without a check (see messages.test.ts). */
const NOT_OBJECT = [1, 'x', true, []];
const NOT_OBJECT_OR_NULL = [...NOT_OBJECT, null];
const notKind = (kind: string) => ['event', 'notice', 'notices', 'ends', 'resume', 'other', 1, null].filter((other) => other !== kind);

const text = fc.string({ maxLength: 12 });
const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });

const scheduledEvent: fc.Arbitrary<ScheduledEvent> = fc.record({
  id: text,
  tenant: text,
  user: optional(text),
  target: text,
  payload: fc.string({ maxLength: 40, unit: 'grapheme' }),
  failureTopic: optional(text),
  dueAt: fc.integer({ min: 0 }),
  version: fc.nat(),
  labels: optional(fc.array(text, { maxLength: 3 })),
});

const failureNotice: fc.Arbitrary<FailureNotice> = fc.record({
  reason: fc.constantFrom(...Object.values(REASON)),
  message: text,
  eventId: optional(text),
  event: fc.jsonValue({ maxDepth: 2 }),
  failedAt: text,
  details: fc.dictionary(text, fc.jsonValue({ maxDepth: 1 })),
});

const emissionEnding: fc.Arbitrary<EmissionEnding> = fc.record({
  event: fc.record({ id: text, tenant: text, version: fc.nat(), dueAt: fc.nat() }),
  end: fc.oneof(
    fc.record({ state: fc.constant('emitted' as const), at: fc.nat() }),
    fc.record({ state: fc.constant('failed' as const), at: fc.nat(), reason: fc.constantFrom(...Object.values(REASON)) }),
  ),
  expiresAt: fc.nat(),
  endedBy: text,
});

const eventMessage = fc.record({ kind: fc.constant('event' as const), event: scheduledEvent, queuedBy: optional(text) });
const noticeMessage = fc
  .record({
    noticeId: text,
    tenant: optional(text),
    destination: fc.constantFrom('failureTopic', 'deadLetterTopic', 'both'),
    failureTopic: text,
    deadLetterTopic: text,
    notice: failureNotice,
  })
  .map(({ destination, failureTopic, deadLetterTopic, ...rest }) => ({
    kind: 'notice' as const,
    ...rest,
    ...(destination !== 'deadLetterTopic' ? { failureTopic } : {}),
    ...(destination !== 'failureTopic' ? { deadLetterTopic } : {}),
  }));
const noticesMessage = fc.record({
  kind: fc.constant('notices' as const),
  notices: fc.array(noticeMessage, { minLength: 1, maxLength: 3 }),
});
const endsMessage = fc.record({ kind: fc.constant('ends' as const), ends: fc.array(emissionEnding, { minLength: 1, maxLength: 3 }) });

const loadingChunk: fc.Arbitrary<LoadingChunk> = fc.record({
  ids: fc.array(text, { maxLength: 4 }),
  chunkId: optional(text),
  repair: optional(fc.constant(true)),
  resume: optional(fc.constant(true)),
});

const changeJob: fc.Arbitrary<ChangeJob> = fc.record({
  kind: fc.constant('resume' as const),
  jobId: text,
  tenant: text,
  after: optional(fc.record({ dueAt: fc.integer({ min: 0 }), id: text })),
});

/** The fields a failure notice at `at` (alone, or in a pack) cannot go without, and the optional ones. */
function noticeFields(message: NoticeMessage, at: Path): { required: Field[]; optional: Field[] } {
  const field = (path: Path, wrong: readonly unknown[]): Field => ({ path: [...at, ...path], wrong });
  // The destination is required only when it is the sole one: a notice goes somewhere.
  const destinations = (['failureTopic', 'deadLetterTopic'] as const).filter((name) => typeof message[name] === 'string');
  const destinationFields = destinations.map((name) => field([name], NOT_STRING));
  return {
    required: [
      field(['kind'], notKind('notice')),
      field(['noticeId'], NOT_STRING),
      field(['notice'], NOT_OBJECT_OR_NULL),
      field(['notice', 'reason'], NOT_STRING),
      ...(destinations.length === 1 ? destinationFields : []),
    ],
    optional: [field(['tenant'], NOT_STRING), ...(destinations.length === 2 ? destinationFields : [])],
  };
}

/** The fields a delay-queue message cannot go without, and the optional ones with their fallback. */
function delayQueueFields(message: DelayQueueMessage): { required: Field[]; optional: Field[] } {
  const kind = { path: ['kind'], wrong: notKind(message.kind) };
  if (message.kind === 'event') {
    const string = (name: string) => ({ path: ['event', name], wrong: NOT_STRING });
    const number = (name: string) => ({ path: ['event', name], wrong: NOT_NUMBER });
    return {
      required: [
        kind,
        { path: ['event'], wrong: NOT_OBJECT },
        ...['id', 'tenant', 'target', 'payload'].map(string),
        ...['dueAt', 'version'].map(number),
      ],
      optional: [
        { path: ['event', 'failureTopic'], wrong: NOT_STRING },
        { path: ['event', 'user'], wrong: NOT_STRING },
        { path: ['event', 'labels'], wrong: [...NOT_ARRAY, [1], ['a', 1], ['a', null]] },
        { path: ['queuedBy'], wrong: NOT_STRING },
      ],
    };
  }
  if (message.kind === 'notice') return noticeFields(message, []);
  if (message.kind === 'notices') {
    const packed = message.notices.map((notice, index) => noticeFields(notice, ['notices', index]));
    return {
      required: [kind, { path: ['notices'], wrong: [...NOT_ARRAY, []] }, ...packed.flatMap(({ required }) => required)],
      optional: packed.flatMap(({ optional }) => optional),
    };
  }
  return {
    required: [
      kind,
      { path: ['ends'], wrong: NOT_ARRAY },
      ...message.ends.flatMap((_end, index) => [
        { path: ['ends', index], wrong: NOT_OBJECT_OR_NULL },
        { path: ['ends', index, 'event'], wrong: NOT_OBJECT_OR_NULL },
        { path: ['ends', index, 'event', 'id'], wrong: NOT_STRING },
        { path: ['ends', index, 'event', 'tenant'], wrong: NOT_STRING },
        { path: ['ends', index, 'event', 'version'], wrong: NOT_NUMBER },
        { path: ['ends', index, 'end'], wrong: NOT_OBJECT_OR_NULL },
        { path: ['ends', index, 'end', 'state'], wrong: ['other', 'queued', 1, null] },
        { path: ['ends', index, 'end', 'at'], wrong: NOT_NUMBER },
        { path: ['ends', index, 'expiresAt'], wrong: NOT_NUMBER },
        { path: ['ends', index, 'endedBy'], wrong: NOT_STRING },
      ]),
    ],
    optional: [],
  };
}

/** The body with the field at `path` removed (`value` undefined) or set to `value`. */
function withField(body: string, path: Path, value: unknown): string {
  const root = JSON.parse(body) as Json;
  let parent = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  if (value === undefined) delete parent[last];
  else parent[last] = value;
  return JSON.stringify(root);
}

/** The message as the decoder must return it: what JSON carries, with the field at `path` at its fallback. */
function withFallback(message: unknown, path: Path): unknown {
  return JSON.parse(withField(JSON.stringify(message), path, undefined));
}

/** Each body with one field removed or given a value of each wrong type. */
function corruptions(body: string, fields: readonly Field[]): { body: string; field: Path; value: unknown }[] {
  return fields.flatMap(({ path, wrong }) =>
    [undefined, ...wrong].map((value) => ({ body: withField(body, path, value), field: path, value })),
  );
}

/** Asserts that each optional field of `message`, removed or mistyped in its body, decodes to its fallback with the rest intact. */
function expectFallbacks(message: unknown, body: string, decode: (body: string) => unknown, fields: readonly Field[]): void {
  for (const { body: corrupted, field, value } of corruptions(body, fields)) {
    expect({ field, value, decoded: decode(corrupted) }).toEqual({ field, value, decoded: withFallback(message, field) });
  }
}

function refusal(decode: () => unknown): unknown {
  try {
    return { decoded: decode() };
  } catch (error) {
    return error instanceof TypeError ? { refused: error.message } : { threw: error };
  }
}

describe('delay-queue messages, whatever they hold', () => {
  const anyMessage = fc.oneof(eventMessage, noticeMessage, noticesMessage, endsMessage) as fc.Arbitrary<DelayQueueMessage>;

  it('decode to what was encoded', () => {
    fc.assert(
      fc.property(anyMessage, (message) => {
        expect(decodeDelayQueueMessage(encodeDelayQueueMessage(message))).toEqual(JSON.parse(JSON.stringify(message)));
      }),
      runs(100),
    );
  });

  it('encode a pack of notices from their own bodies as from the pack itself', () => {
    fc.assert(
      fc.property(noticesMessage, (message) => {
        expect(encodeNoticePack(message.notices.map(encodeDelayQueueMessage))).toBe(encodeDelayQueueMessage(message));
      }),
      runs(100),
    );
  });

  it('are refused as not a delay-queue message when a required field is missing or of the wrong type', () => {
    fc.assert(
      fc.property(anyMessage, (message) => {
        for (const { body, field, value } of corruptions(encodeDelayQueueMessage(message), delayQueueFields(message).required)) {
          expect({ field, value, outcome: refusal(() => decodeDelayQueueMessage(body)) }).toEqual({
            field,
            value,
            outcome: { refused: 'not a delay-queue message' },
          });
        }
      }),
      runs(30),
    );
  });

  it('decode an optional field missing or of the wrong type to its fallback, the rest intact', () => {
    fc.assert(
      fc.property(anyMessage, (message) => {
        expectFallbacks(message, encodeDelayQueueMessage(message), decodeDelayQueueMessage, delayQueueFields(message).optional);
      }),
      runs(30),
    );
  });
});

describe('loading chunks, whatever they hold', () => {
  it('decode to what was encoded', () => {
    fc.assert(
      fc.property(loadingChunk, (chunk) => {
        expect(decodeLoadingChunk(encodeLoadingChunk(chunk))).toEqual(JSON.parse(JSON.stringify(chunk)));
      }),
      runs(100),
    );
  });

  it('are refused as not a loading chunk when their ids, or any one of them, are missing or not strings', () => {
    fc.assert(
      fc.property(loadingChunk, (chunk) => {
        const fields = [
          { path: ['ids'], wrong: NOT_ARRAY },
          ...chunk.ids.map((_id, index) => ({ path: ['ids', index], wrong: NOT_STRING })),
        ];
        // An id removed from the list leaves a shorter list of ids: the list itself is what is required.
        const mistyped = corruptions(encodeLoadingChunk(chunk), fields).filter(
          ({ field, value }) => field.length === 1 || value !== undefined,
        );
        for (const { body, field, value } of mistyped) {
          expect({ field, value, outcome: refusal(() => decodeLoadingChunk(body)) }).toEqual({
            field,
            value,
            outcome: { refused: 'not a loading chunk' },
          });
        }
      }),
      runs(30),
    );
  });

  it('decode a chunk id that is missing or not a string to none, and a repair or resume flag to set only when it is true', () => {
    fc.assert(
      fc.property(loadingChunk, (chunk) => {
        const optionalFields = [
          { path: ['chunkId'], wrong: NOT_STRING },
          { path: ['repair'], wrong: ['true', 1, false, null, {}] },
          { path: ['resume'], wrong: ['true', 1, false, null, {}] },
        ];
        expectFallbacks(chunk, encodeLoadingChunk(chunk), decodeLoadingChunk, optionalFields);
      }),
      runs(30),
    );
  });
});

describe('change jobs, whatever they hold', () => {
  it('decode to what was encoded', () => {
    fc.assert(
      fc.property(changeJob, (job) => {
        expect(decodeChangeJob(encodeChangeJob(job))).toEqual(JSON.parse(JSON.stringify(job)));
      }),
      runs(100),
    );
  });

  it('are refused as not a change job when a required field is missing or of the wrong type', () => {
    fc.assert(
      fc.property(changeJob, (job) => {
        const body = encodeChangeJob(job);
        const required = [
          { path: ['kind'], wrong: notKind('resume') },
          { path: ['jobId'], wrong: NOT_STRING },
          { path: ['tenant'], wrong: NOT_STRING },
        ];
        // The cursor is optional, but one that is there must be whole.
        const cursor =
          job.after === undefined
            ? []
            : [
                { path: ['after', 'dueAt'], wrong: NOT_NUMBER },
                { path: ['after', 'id'], wrong: NOT_STRING },
              ];
        const mistypedCursor = corruptions(body, [{ path: ['after'], wrong: NOT_OBJECT_OR_NULL }]).filter(
          ({ value }) => value !== undefined,
        );
        for (const { body: corrupted, field, value } of [...corruptions(body, [...required, ...cursor]), ...mistypedCursor]) {
          expect({ field, value, outcome: refusal(() => decodeChangeJob(corrupted)) }).toEqual({
            field,
            value,
            outcome: { refused: 'not a change job' },
          });
        }
      }),
      runs(30),
    );
  });
});
