import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { EndRecorder } from '../src/app/end-recorder.js';
import type { EndsRecorded } from '../src/app/ports.js';
import { noMetrics } from '../src/app/ports.js';
import type { EmissionEnding } from '../src/domain/emission.js';
import { TransientError } from '../src/domain/reasons.js';

function ending(id: string): EmissionEnding {
  return { event: { id, tenant: 'acme', version: 1 }, end: { state: 'emitted', at: 1 }, expiresAt: 2, endedBy: `delivery-${id}` };
}

/** A store whose end writes answer only when the test says so. */
class HeldWrites {
  readonly writes: { ends: readonly EmissionEnding[]; answer: (recorded: Partial<EndsRecorded>) => void; fail: (error: Error) => void }[] = [];

  async endEmissions(ends: readonly EmissionEnding[]): Promise<EndsRecorded> {
    return new Promise((resolve, reject) => {
      this.writes.push({ ends, answer: (recorded) => resolve({ recorded: ends, alreadyEnded: [], unknown: [], freed: new Map([['acme', ends.length]]), ...recorded }), fail: reject });
    });
  }

  readonly released: ReadonlyMap<string, number>[] = [];

  async releasePlaces(freed: ReadonlyMap<string, number>): Promise<readonly { tenant: string; count: number }[]> {
    this.released.push(new Map(freed));
    return [];
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
  const recorder = new EndRecorder({ store, delayQueue, logger: pino({ level: 'silent' }), metrics: noMetrics });
  return { store, delayQueue, handedOver, recorder };
}

/** Lets the event loop turn once: what the recorder does on its next turn is done. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('the end recorder', () => {
  it('writes the ends that come in the same turn together, at once', async () => {
    const { store, recorder } = setup();
    const outcomes = [recorder.record(ending('a')), recorder.record(ending('b'))];
    await nextTurn();
    expect(store.writes).toHaveLength(1);
    expect(store.ids(0)).toEqual(['a', 'b']);
    store.writes[0]?.answer({});
    expect(await Promise.all(outcomes)).toEqual(['recorded', 'recorded']);
  });

  it('writes the ends of a later turn at once, without waiting for a write on its way: one that hangs holds back only its own', async () => {
    const { store, recorder } = setup();
    const hung = recorder.record(ending('a'));
    await nextTurn();
    const later = recorder.record(ending('b'));
    await nextTurn();
    expect(store.writes).toHaveLength(2);
    expect(store.ids(1)).toEqual(['b']);
    store.writes[1]?.answer({});
    expect(await later).toBe('recorded');
    store.writes[0]?.answer({});
    expect(await hung).toBe('recorded');
  });

  it('hands over the ends whose writes kept failing, at most 100 to a message; keeps them when that fails too', async () => {
    const { store, delayQueue, handedOver, recorder } = setup();
    const many = Array.from({ length: 150 }, (_, i) => recorder.record(ending(`e-${i}`)));
    await nextTurn();
    store.writes[0]?.answer({ recorded: [], unknown: store.writes[0].ends });
    expect(new Set(await Promise.all(many))).toEqual(new Set(['handed-over']));
    expect(handedOver.map((ends) => ends.length)).toEqual([100, 50]);

    delayQueue.refuse = true;
    const lost = recorder.record(ending('lost'));
    await nextTurn();
    store.writes[1]?.fail(new TransientError('DynamoDB down'));
    expect(await lost).toBe('kept');
  });

  it('frees the places the recorded ends release once, when asked, in one release for all its writes', async () => {
    const { store, recorder } = setup();
    const first = recorder.record(ending('a'));
    await nextTurn();
    const second = [recorder.record(ending('b')), recorder.record(ending('c'))];
    await nextTurn();
    store.writes[0]?.answer({});
    store.writes[1]?.answer({});
    await Promise.all([first, ...second]);
    expect(store.released).toEqual([]);
    await recorder.releasePlaces();
    expect(store.released).toEqual([new Map([['acme', 3]])]);
    await recorder.releasePlaces();
    expect(store.released).toHaveLength(1);
  });
});
