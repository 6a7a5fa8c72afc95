import type { EventRecord } from '@adhoc-scheduler/shared';
import { describe, expect, it } from 'vitest';
import {
  deadLetterKind,
  describeOutcome,
  duplicateCause,
  eventEvidence,
  deliveryByPart,
  summarizeFaults,
  summarizeKills,
  type EventOutcome,
  type WatchedEvent,
} from '../src/chaos/evidence.js';
import type { InjectedFault } from '../src/chaos/faults.js';
import type { KillRecord } from '../src/chaos/kills.js';

const DUE = 1_800_000_100_000;
const EVENT: WatchedEvent = { eventId: `c-${'1'.repeat(40)}`, clientId: 'lt-run-far-7', part: 'far', dueAt: DUE, publishAt: DUE - 80_000 };

function fault(id: string, at: number, ids: readonly string[], kind: InjectedFault['kind'] = 'refused'): InjectedFault {
  return { id, at, service: 'sqs', operation: 'SendMessageBatch', kind, ids };
}

function kill(n: number, killedAt: number): KillRecord {
  return { n, killedAt, emulatorsGoneAt: killedAt + 400, readyAt: killedAt + 6_000, plannedAt: killedAt, atSpike: false };
}

const RECORD: EventRecord = {
  id: EVENT.eventId,
  tenant: 'public',
  user: 'u',
  target: 'arn:aws:sns:us-east-1:000000000000:t',
  dueAt: DUE,
  version: 1,
  state: 'queued',
  payloadKept: 'record',
  createdAt: DUE - 79_000,
  // Taken by the loader: its time is the one the evidence shows as queued.
  loadedAt: DUE - 40_000,
  loadedBy: 'chunk-message-1',
  queuedBy: 'token-1',
  expiresAt: 0,
};

describe('eventEvidence', () => {
  it('joins an event with its record, the faults on calls that named it or its request, and the kills since its publish', () => {
    const evidence = eventEvidence(
      EVENT,
      { kind: 'missing' },
      {
        faults: [
          fault('f1.3', DUE - 79_500, ['lt-run-far-7']),
          fault('f2.9', DUE - 40_000, [EVENT.eventId, 'c-other'], 'lost'),
          fault('f2.10', DUE, ['c-other']),
        ],
        kills: [kill(1, DUE - 90_000), kill(2, DUE - 39_000), kill(3, DUE + 5_000)],
        record: RECORD,
        deadLetterIds: new Set(['lt-run-far-7']),
      },
    );

    expect(evidence).toEqual({
      eventId: EVENT.eventId,
      clientId: 'lt-run-far-7',
      part: 'far',
      outcome: { kind: 'missing' },
      dueAt: new Date(DUE).toISOString(),
      record: {
        state: 'queued',
        version: 1,
        dueAt: new Date(DUE).toISOString(),
        payloadKept: 'record',
        created: -79_000,
        queued: -40_000,
        emitted: undefined,
        failed: undefined,
        reason: undefined,
        loadedBy: 'chunk-message-1',
        queuedBy: 'token-1',
      },
      faults: [
        { id: 'f1.3', service: 'sqs', operation: 'SendMessageBatch', kind: 'refused', msFromDue: -79_500 },
        { id: 'f2.9', service: 'sqs', operation: 'SendMessageBatch', kind: 'lost', msFromDue: -40_000 },
      ],
      kills: [
        { n: 2, msFromDue: -39_000 },
        { n: 3, msFromDue: 5_000 },
      ],
      inDeadLetterQueue: true,
    });
  });

  it('says when the table holds no record of the event', () => {
    const evidence = eventEvidence(
      EVENT,
      { kind: 'failed', reason: 'PUBLISH_FAILED' },
      { faults: [], kills: [], record: undefined, deadLetterIds: new Set() },
    );
    expect(evidence).toMatchObject({
      record: 'none',
      faults: [],
      kills: [],
      inDeadLetterQueue: false,
      outcome: { kind: 'failed', reason: 'PUBLISH_FAILED' },
    });
  });
});

describe('summaries', () => {
  it('gives each kill its time into the run, its distance from the spike and how long the service was down', () => {
    const start = DUE - 200_000;
    expect(summarizeKills([{ ...kill(1, DUE + 250), atSpike: true }], start, DUE)).toEqual([
      { n: 1, secondsIntoRun: 200.3, atSpike: true, msFromSpike: 250, emulatorsExitSeconds: 0.4, downSeconds: 6 },
    ]);
  });

  it('counts faults by kind and per call, refused calls being calls that never became requests', () => {
    const faults = [fault('f1.1', DUE, []), fault('f1.2', DUE, [], 'lost'), fault('f1.3', DUE, [])];
    expect(summarizeFaults(faults, 1, { sns: 10, sqs: 50, dynamodb: 38 })).toEqual({
      total: 3,
      refused: 2,
      lost: 1,
      byService: { sqs: { SendMessageBatch: { refused: 2, lost: 1 } } },
      requests: { sns: 10, sqs: 50, dynamodb: 38 },
      calls: 100,
      share: 0.03,
      unreadableLines: 1,
    });
  });

  it('gives the lateness and the duplicates of each part of the load', () => {
    const near = Array.from({ length: 100 }, (_, i) => ({
      part: 'near' as const,
      latenessMs: i + 1,
      deliveries: i < 3 ? 2 : 1,
      duplicateCause: i < 3 ? ('kill' as const) : undefined,
    }));
    expect(deliveryByPart([...near, { part: 'spike', latenessMs: 40_000, deliveries: 3, duplicateCause: 'lostAnswer' }])).toEqual({
      near: { events: 100, duplicated: 3, duplicatedBy: { lostAnswer: 0, kill: 3, other: 0 }, p50: 50, p99: 99, max: 100 },
      spike: { events: 1, duplicated: 2, duplicatedBy: { lostAnswer: 2, kill: 0, other: 0 }, p50: 40_000, p99: 40_000, max: 40_000 },
    });
  });

  it('puts a duplicate down to a lost SNS answer naming the event, else to a kill close to its first delivery, else to something else', () => {
    const lostPublish: InjectedFault = { ...fault('f1', DUE, [EVENT.clientId], 'lost'), service: 'sns', operation: 'PublishBatch' };
    const refusedPublish: InjectedFault = { ...lostPublish, kind: 'refused' };
    const receivedAt = DUE + 500;
    expect(duplicateCause(EVENT, receivedAt, { faults: [lostPublish], kills: [kill(1, DUE + 200)] })).toBe('lostAnswer');
    expect(duplicateCause(EVENT, receivedAt, { faults: [refusedPublish], kills: [kill(1, DUE + 200)] })).toBe('kill');
    expect(duplicateCause(EVENT, receivedAt, { faults: [], kills: [kill(1, DUE - 60_000)] })).toBe('other');
  });

  it('says each outcome in a few words', () => {
    const outcomes: EventOutcome[] = [
      { kind: 'missing' },
      { kind: 'failed', reason: 'PUBLISH_FAILED' },
      { kind: 'early', byMs: 3 },
      { kind: 'late', byMs: 900 },
    ];
    expect(outcomes.map(describeOutcome)).toEqual(['missing', 'failed PUBLISH_FAILED', 'early by 3 ms', 'late by 900 ms']);
  });

  it('tells dead letters apart by the queue they came from', () => {
    expect(deadLetterKind(JSON.stringify({ Type: 'Notification', Message: '{}' }))).toBe('input (ingest queue)');
    expect(deadLetterKind(JSON.stringify({ ids: ['c-1'] }))).toBe('loading chunk (loading queue)');
    expect(deadLetterKind(JSON.stringify({ kind: 'event', event: {} }))).toBe('event (delay queue)');
    expect(deadLetterKind('not json')).toBe('other');
  });
});
