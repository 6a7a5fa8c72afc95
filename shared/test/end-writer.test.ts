import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { EndWriter } from '../src/app/end-writer.js';
import type { EndsRecorded } from '../src/app/ports.js';
import { noMetrics } from '../src/adapters/emf-metrics.js';
import type { EmissionEnding } from '../src/domain/emission.js';
import { TransientError } from '../src/domain/reasons.js';

function ending(id: string): EmissionEnding {
  return { event: { id, tenant: 'acme', version: 1 }, end: { state: 'emitted', at: 1 }, expiresAt: 2, endedBy: `delivery-${id}` };
}

/** A store whose end writes answer only when the test says so. */
class HeldWrites {
  readonly writes: { ends: readonly EmissionEnding[]; answer: (recorded?: Partial<EndsRecorded>) => void; fail: (error: Error) => void }[] =
    [];

  async endEmissions(ends: readonly EmissionEnding[]): Promise<EndsRecorded> {
    return new Promise((resolve, reject) => {
      this.writes.push({
        ends,
        answer: (recorded) => resolve({ recorded: ends, alreadyEnded: [], unknown: [], applied: ends, ...recorded }),
        fail: reject,
      });
    });
  }

  ids(write: number): string[] {
    return (this.writes[write]?.ends ?? []).map(({ event }) => event.id);
  }
}

function setup() {
  const store = new HeldWrites();
  const handedOver: (readonly EmissionEnding[])[] = [];
  const delayQueue = {
    refuse: false,
    async sendEnds(ends: readonly EmissionEnding[]): Promise<void> {
      if (delayQueue.refuse) throw new TransientError('SQS down');
      handedOver.push(ends);
    },
  };
  const writer = new EndWriter({ store, delayQueue, logger: pino({ level: 'silent' }), metrics: noMetrics });
  return { store, delayQueue, handedOver, writer };
}

/** Lets the event loop turn once: what the writer does on its next turn is done. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('the end writer', () => {
  it('writes the ends that come in the same turn together, at once', async () => {
    const { store, writer } = setup();
    const settled = [writer.record(ending('a')), writer.record(ending('b'))];
    await nextTurn();
    expect(store.writes).toHaveLength(1);
    expect(store.ids(0)).toEqual(['a', 'b']);
    store.writes[0]?.answer();
    expect((await Promise.all(settled)).map(({ outcome }) => outcome)).toEqual(['recorded', 'recorded']);
  });

  it('keeps two writes in flight; the ends that answer while both are busy go together in the next, a transaction’s worth at most', async () => {
    const { store, writer } = setup();
    const first = writer.record(ending('a'));
    await nextTurn();
    const second = writer.record(ending('b'));
    await nextTurn();
    expect(store.writes).toHaveLength(2);
    const waiting = Array.from({ length: 150 }, (_, i) => writer.record(ending(`w-${i}`)));
    await nextTurn();
    expect(store.writes).toHaveLength(2);
    // The second answers first: a write that hangs holds back only its own ends.
    store.writes[1]?.answer();
    expect((await second).outcome).toBe('recorded');
    await nextTurn();
    expect(store.writes).toHaveLength(3);
    expect(store.ids(2)).toHaveLength(100);
    store.writes[0]?.answer();
    expect((await first).outcome).toBe('recorded');
    await nextTurn();
    expect(store.ids(3)).toHaveLength(50);
    store.writes[2]?.answer();
    store.writes[3]?.answer();
    expect(new Set((await Promise.all(waiting)).map(({ outcome }) => outcome))).toEqual(new Set(['recorded']));
  });

  it('says which ends free a place: those its write applied, not those found ended by an earlier attempt or another delivery', async () => {
    const { store, writer } = setup();
    const settled = ['applied', 'own', 'other'].map((id) => writer.record(ending(id)));
    await nextTurn();
    const [applied, own, other] = store.writes[0]?.ends ?? [];
    store.writes[0]?.answer({
      recorded: [applied, own].filter((end) => end !== undefined),
      alreadyEnded: other ? [other] : [],
      applied: applied ? [applied] : [],
    });
    expect(await Promise.all(settled)).toEqual([
      { outcome: 'recorded', freesPlace: true },
      { outcome: 'recorded', freesPlace: false },
      { outcome: 'recorded', freesPlace: false },
    ]);
  });

  it('hands over the ends whose writes kept failing, at most 100 to a message; keeps them when that fails too', async () => {
    const { store, delayQueue, handedOver, writer } = setup();
    const many = Array.from({ length: 100 }, (_, i) => writer.record(ending(`e-${i}`)));
    await nextTurn();
    store.writes[0]?.answer({ recorded: [], unknown: store.writes[0].ends, applied: [] });
    expect(new Set((await Promise.all(many)).map(({ outcome }) => outcome))).toEqual(new Set(['handed-over']));
    expect(handedOver.map((ends) => ends.length)).toEqual([100]);

    delayQueue.refuse = true;
    const lost = writer.record(ending('lost'));
    await nextTurn();
    store.writes[1]?.fail(new TransientError('DynamoDB down'));
    expect(await lost).toEqual({ outcome: 'kept', freesPlace: false });
  });
});
