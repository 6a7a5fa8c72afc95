import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EMISSION_ATTRIBUTE, emissionAttributes, requestHashOf, type ScheduledEvent } from '../src/domain/event.js';
import { eventOf } from '../src/domain/lifecycle.js';
import { decodeDelayQueueMessage, encodeDelayQueueMessage } from '../src/domain/messages.js';
import { REASON } from '../src/domain/reasons.js';
import { eventIdOfLabelEntry, labelEntryId, labelShardKey, listingPartitions, tenantShardKey } from '../src/domain/table-keys.js';
import { decodePageToken, encodePageToken, PageTokenError } from '../src/domain/tenant-index.js';
import type { ParseResult } from '../src/domain/validation.js';
import { topicArn, validate } from './factories.js';

function labelsOf(result: ParseResult): readonly string[] | undefined {
  if (!result.accepted || result.request.kind !== 'schedule') throw new Error(`expected an event, got ${JSON.stringify(result)}`);
  return result.request.event.labels;
}

function refusal(result: ParseResult) {
  if (result.accepted) throw new Error('expected a refusal');
  return { reason: result.error.reason, field: result.error.details?.field };
}

const event: ScheduledEvent = {
  id: 'c-1',
  tenant: 'acme',
  user: 'alice',
  target: topicArn('out'),
  payload: '{"invoice":42}',
  dueAt: 1_900_000_000_000,
  version: 1,
};

describe('labels in a schedule request', () => {
  it('are taken as given: up to 10 distinct ones of letters, digits and . _ : -, starting with a letter or digit', () => {
    const labels = ['billing', 'EU-west.2', 'a', '9:30', 'x_y', 'l'.repeat(64), 'c', 'd', 'e', 'f'];
    expect(labelsOf(validate({ labels }))).toEqual(labels);
  });

  it('are absent from the event when the request gives none, or an empty list', () => {
    expect(labelsOf(validate())).toBeUndefined();
    expect(labelsOf(validate({ labels: [] }))).toBeUndefined();
  });

  it.each<[string, unknown]>([
    ['more than 10', Array.from({ length: 11 }, (_, i) => `l${i}`)],
    ['the same label twice', ['a', 'a']],
    ['an empty label', ['']],
    ['one longer than 64', ['l'.repeat(65)]],
    ['one starting with a dash', ['-a']],
    ['one with a comma, which would split the delivery attribute', ['a,b']],
    ['one with a #, which would split the index keys', ['a#b']],
    ['one with a space', ['a b']],
    ['a label that is not a string', [1]],
    ['a string instead of a list', 'billing'],
  ])('are refused as INVALID_FIELD, field labels, for %s', (_case, labels) => {
    expect(refusal(validate({ labels }))).toEqual({ reason: REASON.INVALID_FIELD, field: 'labels' });
  });
});

describe('the digest of a labelled request', () => {
  it('is the digest of the same request without labels when there are none, as digests kept before labels were', () => {
    const before = createHash('sha256')
      .update(JSON.stringify([event.dueAt, event.target, event.payload, null, event.user]))
      .digest('base64url')
      .slice(0, 32);
    expect(requestHashOf(event)).toBe(before);
    expect(requestHashOf({ ...event, labels: [] })).toBe(before);
  });

  it('counts the labels in any order, and changes with them', () => {
    expect(requestHashOf({ ...event, labels: ['b', 'a'] })).toBe(requestHashOf({ ...event, labels: ['a', 'b'] }));
    expect(requestHashOf({ ...event, labels: ['a'] })).not.toBe(requestHashOf(event));
    expect(requestHashOf({ ...event, labels: ['a'] })).not.toBe(requestHashOf({ ...event, labels: ['a', 'b'] }));
  });
});

describe('labels on the way to the target', () => {
  it('travel with the event through the delay queue and from its record', () => {
    const labelled = { ...event, labels: ['billing', 'eu'] };
    const decoded = decodeDelayQueueMessage(encodeDelayQueueMessage({ kind: 'event', event: labelled, queuedBy: 'copy-1' }));
    expect(decoded).toMatchObject({ event: { labels: ['billing', 'eu'] } });
    const { payload, ...record } = labelled;
    expect(eventOf({ ...record, state: 'scheduled', payloadKept: 'record', createdAt: 0, expiresAt: 0 }, payload).labels).toEqual([
      'billing',
      'eu',
    ]);
  });

  it('are delivered as scheduler-labels, joined by commas, only on an event that has some', () => {
    expect(emissionAttributes({ ...event, labels: ['billing', 'eu'] }, event.dueAt)[EMISSION_ATTRIBUTE.labels]).toBe('billing,eu');
    expect(emissionAttributes(event, event.dueAt)).not.toHaveProperty(EMISSION_ATTRIBUTE.labels);
    expect(emissionAttributes({ ...event, labels: [] }, event.dueAt)).not.toHaveProperty(EMISSION_ATTRIBUTE.labels);
  });
});

describe('the tenant index keys', () => {
  it("keep each tenant's events, and each label's, apart", () => {
    expect(tenantShardKey('acme', 's', 3)).toBe('acme#s3');
    expect(tenantShardKey('acme', 'q', 3)).toBe('acme#q3');
    expect(labelShardKey('acme', 'billing', 3)).toBe('acme#l#billing#3');
    expect(listingPartitions('acme', undefined, 2)).toEqual(['acme#s0', 'acme#q0', 'acme#h0', 'acme#s1', 'acme#q1', 'acme#h1']);
    expect(listingPartitions('acme', 'billing', 2)).toEqual(['acme#l#billing#0', 'acme#l#billing#1']);
  });

  it('name the event a label entry lists', () => {
    expect(eventIdOfLabelEntry(labelEntryId('c-0123abcd', 'eu.west:2'))).toBe('c-0123abcd');
  });

  it('make a page token that reads back, and refuse one no listing printed', () => {
    expect(decodePageToken(encodePageToken({ dueAt: 1_900_000_000_000, id: 'm-1' }))).toEqual({ dueAt: 1_900_000_000_000, id: 'm-1' });
    expect(() => decodePageToken('not-a-token')).toThrow(PageTokenError);
    expect(() => decodePageToken(Buffer.from('[1]').toString('base64url'))).toThrow(PageTokenError);
  });
});
