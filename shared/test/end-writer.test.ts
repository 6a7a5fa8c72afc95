import { describe, expect, it, vi } from 'vitest';
import { EndWriter } from '../src/app/end-writer.js';
import type { EndJournal } from '../src/app/ports/emitter-records.js';
import type { EmissionEnding } from '../src/domain/emission.js';
import { EVENT_STATE } from '../src/domain/lifecycle.js';
import { TransientError } from '../src/domain/reasons.js';
import { storedRecord } from './factories.js';
import { MemoryDelayQueue, RecordingLogger, RecordingMetrics } from './fakes.js';
import { MemoryEventStore } from './memory-event-store.js';

/** A journal in memory: what it keeps; with `hold`, each append waits until the test lets it answer. */
class MemoryEndJournal implements EndJournal {
  readonly kept: EmissionEnding[] = [];
  /** The appends asked for, each with the ends it took; held ones answer when the test calls `answer`. */
  readonly appends: { ends: readonly EmissionEnding[]; answer: () => void }[] = [];
  clears = 0;
  refuse = false;
  hold = false;
  /** Refuses to be emptied, as a disk that fails. */
  refuseClears = false;
  /** With `holdClears`, each clear waits until the test answers it, then empties what the journal holds by then: a slow truncation on disk. */
  holdClears = false;
  readonly heldClears: (() => void)[] = [];

  async keep(ends: readonly EmissionEnding[]): Promise<void> {
    if (this.refuse) throw new Error('disk full');
    if (this.hold) await new Promise<void>((answer) => this.appends.push({ ends, answer }));
    else this.appends.push({ ends, answer: () => {} });
    this.kept.push(...ends);
  }

  async clear(): Promise<void> {
    this.clears += 1;
    if (this.refuseClears) throw new Error('disk gone');
    if (this.holdClears) await new Promise<void>((answer) => this.heldClears.push(answer));
    this.kept.length = 0;
  }
}

function setup({ lingerMs = 0, journal }: { lingerMs?: number; journal?: EndJournal } = {}) {
  const store = new MemoryEventStore();
  const writes = store.holdEndWrites();
  const delayQueue = new MemoryDelayQueue();
  const logger = new RecordingLogger();
  const metrics = new RecordingMetrics();
  const writer = new EndWriter({ store, delayQueue, logger, metrics, ...(journal ? { journal } : {}) }, { lingerMs });
  /** The end of a queued event's emission. */
  const ending = (id: string, tenant = 'acme', end: EmissionEnding['end'] = { state: 'emitted', at: 1 }): EmissionEnding => {
    store.put({ ...storedRecord(id, 1), state: EVENT_STATE.queued });
    return {
      event: { id, tenant, version: 1, dueAt: 0 },
      end,
      expiresAt: 2,
      endedBy: `delivery-${id}`,
    };
  };
  /** The ids of the ends a write took. */
  const ids = (write: number): string[] => (writes[write]?.ends ?? []).map(({ event }) => event.id);
  return { store, writes, ids, delayQueue, handedOver: delayQueue.handedOver, writer, ending, logger, metrics };
}

/** Lets the event loop turn once: what the writer does on its next turn is done. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Runs a test's body on fake timers and clock; setImmediate stays real, for nextTurn. */
async function onFakeTimers(body: () => Promise<void>): Promise<void> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  try {
    await body();
  } finally {
    vi.useRealTimers();
  }
}

describe('the end writer', () => {
  it('writes the ends that come in the same turn together, at once', async () => {
    const { writes, ids, writer, ending } = setup();
    const settled = [writer.record(ending('a')), writer.record(ending('b'))];
    await nextTurn();
    expect(writes).toHaveLength(1);
    expect(ids(0)).toEqual(['a', 'b']);
    writes[0]?.answer();
    expect((await Promise.all(settled)).map(({ outcome }) => outcome)).toEqual(['recorded', 'recorded']);
  });

  it("adds a write's ends to their tenants' counts in one increment per tenant and minute, before they settle", async () => {
    const { store, writes, writer, ending } = setup();
    const settled = [
      writer.record(ending('a')),
      writer.record(ending('b', 'acme', { state: 'failed', at: 2, reason: 'TARGET_NOT_FOUND' })),
      writer.record(ending('c', 'globex', { state: 'emitted', at: 30 })),
    ];
    await nextTurn();
    writes[0]?.answer();
    await Promise.all(settled);
    expect(store.endCounts.map(({ tenant, counts }) => [tenant, counts.emitted, counts.failed])).toEqual([
      ['acme', 1, 1],
      ['globex', 1, 0],
    ]);
  });

  it('counts no end the write did not apply, and records the ends when their counts cannot be added', async () => {
    const { store, writes, writer, ending, logger } = setup();
    const throttled = new TransientError('throttled');
    store.countEnds = () => Promise.reject(throttled);
    const settled = [writer.record(ending('a')), writer.record(ending('b'))];
    await nextTurn();
    writes[0]?.answer({ applied: [] });
    expect((await Promise.all(settled)).map(({ outcome }) => outcome)).toEqual(['recorded', 'recorded']);
    expect(logger.at('warn')).toEqual([]);
    const again = writer.record(ending('c'));
    await nextTurn();
    writes[1]?.answer();
    expect((await again).outcome).toBe('recorded');
    expect(logger.at('warn')).toEqual([
      {
        level: 'warn',
        fields: { err: throttled, ends: 1 },
        message: "could not add ends to their tenants' counts; the console's counts are short by them",
      },
    ]);
  });

  it('counts and warns of each end another delivery had already recorded, by event and version: two copies were emitted at once', async () => {
    const { writes, writer, ending, logger, metrics } = setup();
    const settled = ['twice', 'once'].map((id) => writer.record(ending(id)));
    await nextTurn();
    const [twice, once] = writes[0]?.ends ?? [];
    writes[0]?.answer({
      recorded: once ? [once] : [],
      alreadyEnded: twice ? [twice] : [],
      applied: once ? [once] : [],
    });
    expect(await Promise.all(settled)).toEqual([
      { outcome: 'recorded', freesPlace: false },
      { outcome: 'recorded', freesPlace: true },
    ]);
    expect(metrics.counts.DuplicateEmissions).toBe(1);
    expect(logger.at('warn', 'error')).toEqual([
      {
        level: 'warn',
        fields: { eventId: 'twice', version: 1 },
        message: 'emitted, but another delivery had already ended the event: two copies were emitted at once',
      },
    ]);
  });

  it('writes together the ends answered during one turn, also on the turn a write goes out', async () => {
    const { store, writes, ids, writer, ending } = setup();
    const endEmissions = store.endEmissions.bind(store);
    const settled: Promise<unknown>[] = [];
    store.endEmissions = (ends) => {
      // An end answered just after the first write went out.
      if (writes.length === 0) queueMicrotask(() => settled.push(writer.record(ending('c'))));
      return endEmissions(ends);
    };
    settled.push(writer.record(ending('a')), writer.record(ending('b')));
    // Another later on the same turn.
    setImmediate(() => settled.push(writer.record(ending('d'))));
    await nextTurn();
    await nextTurn();
    expect(writes.map((_, write) => ids(write))).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    for (const write of writes) write.answer();
    await Promise.all(settled);
  });

  it('keeps two writes in flight; the ends that answer while both are busy go together in the next, a transaction’s worth at most', async () => {
    const { writes, ids, writer, ending } = setup();
    const first = writer.record(ending('a'));
    await nextTurn();
    const second = writer.record(ending('b'));
    await nextTurn();
    expect(writes).toHaveLength(2);
    const waiting = Array.from({ length: 150 }, (_, i) => writer.record(ending(`w-${i}`)));
    await nextTurn();
    expect(writes).toHaveLength(2);
    // The second answers first: a write that hangs holds back only its own ends.
    writes[1]?.answer();
    expect((await second).outcome).toBe('recorded');
    await nextTurn();
    expect(writes).toHaveLength(3);
    expect(ids(2)).toHaveLength(100);
    writes[0]?.answer();
    expect((await first).outcome).toBe('recorded');
    await nextTurn();
    expect(ids(3)).toHaveLength(50);
    writes[2]?.answer();
    writes[3]?.answer();
    expect(new Set((await Promise.all(waiting)).map(({ outcome }) => outcome))).toEqual(new Set(['recorded']));
  });

  it('idles while both its writes are busy, with no timer polling for a free one: the write that answers sends the ends waiting', async () => {
    await onFakeTimers(async () => {
      const { writes, ids, writer, ending } = setup();
      const settled = [writer.record(ending('a'))];
      await nextTurn();
      settled.push(writer.record(ending('b')));
      await nextTurn();
      settled.push(writer.record(ending('c')));
      await nextTurn();
      expect(writes).toHaveLength(2);
      expect(vi.getTimerCount()).toBe(0);
      writes[0]?.answer();
      await vi.waitFor(() => expect(ids(2)).toEqual(['c']));
      writes[1]?.answer();
      writes[2]?.answer();
      await Promise.all(settled);
    });
  });

  it('says which ends free a place: those its write applied, not those found ended by an earlier attempt or another delivery', async () => {
    const { writes, writer, ending } = setup();
    const settled = ['applied', 'own', 'other'].map((id) => writer.record(ending(id)));
    await nextTurn();
    const [applied, own, other] = writes[0]?.ends ?? [];
    writes[0]?.answer({
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

  it('hands over only the ends its write could not settle', async () => {
    const { writes, handedOver, writer, ending } = setup();
    const settled = ['recorded', 'unsettled'].map((id) => writer.record(ending(id)));
    await nextTurn();
    const [recorded, unsettled] = writes[0]?.ends ?? [];
    writes[0]?.answer({ recorded: recorded ? [recorded] : [], unknown: unsettled ? [unsettled] : [], applied: recorded ? [recorded] : [] });
    expect(await Promise.all(settled)).toEqual([
      { outcome: 'recorded', freesPlace: true },
      { outcome: 'handed-over', freesPlace: false },
    ]);
    expect(handedOver.map((ends) => ends.map(({ event }) => event.id))).toEqual([['unsettled']]);
  });

  it('hands over the ends whose writes kept failing, at most 100 to a message; keeps them when that fails too', async () => {
    const { writes, delayQueue, handedOver, writer, ending } = setup();
    const many = Array.from({ length: 100 }, (_, i) => writer.record(ending(`e-${i}`)));
    await nextTurn();
    writes[0]?.answer({ recorded: [], unknown: writes[0].ends, applied: [] });
    expect(new Set((await Promise.all(many)).map(({ outcome }) => outcome))).toEqual(new Set(['handed-over']));
    expect(handedOver.map((ends) => ends.length)).toEqual([100]);

    delayQueue.refuseHandOvers = true;
    const lost = writer.record(ending('lost'));
    await nextTurn();
    writes[1]?.fail(new TransientError('DynamoDB down'));
    expect(await lost).toEqual({ outcome: 'kept', freesPlace: false });
  });

  it('warns of a write that failed, with its error and its number of ends, then names the events whose ends it handed over', async () => {
    const { writes, writer, ending, logger } = setup();
    const settled = ['a', 'b'].map((id) => writer.record(ending(id)));
    await nextTurn();
    const down = new TransientError('DynamoDB down');
    writes[0]?.fail(down);
    expect((await Promise.all(settled)).map(({ outcome }) => outcome)).toEqual(['handed-over', 'handed-over']);
    expect(logger.at('warn', 'error')).toEqual([
      { level: 'warn', fields: { err: down, ends: 2 }, message: 'could not record ends; handing them over' },
      {
        level: 'warn',
        fields: { eventIds: ['a', 'b'] },
        message: 'emitted, but could not record it yet; the ends are handed over to be recorded later',
      },
    ]);
  });

  it('logs as an error, naming the events, ends it could neither record nor hand over: their messages are kept and may be published again', async () => {
    const { writes, delayQueue, writer, ending, logger } = setup();
    delayQueue.refuseHandOvers = true;
    const lost = ['a', 'b'].map((id) => writer.record(ending(id)));
    await nextTurn();
    writes[0]?.fail(new TransientError('DynamoDB down'));
    expect((await Promise.all(lost)).map(({ outcome }) => outcome)).toEqual(['kept', 'kept']);
    expect(logger.at('error')).toEqual([
      {
        level: 'error',
        fields: { err: expect.objectContaining({ message: 'SQS down' }), eventIds: ['a', 'b'] },
        message: 'emitted, but could not record it nor hand it over; the messages are kept and may be published again',
      },
    ]);
  });

  it('leaves an end it could neither record nor hand over to its message, which stays: it does not write it again', async () => {
    await onFakeTimers(async () => {
      const { writes, delayQueue, writer, ending } = setup();
      delayQueue.refuseHandOvers = true;
      const lost = writer.record(ending('lost'));
      await nextTurn();
      writes[0]?.fail(new TransientError('DynamoDB down'));
      expect(await lost).toEqual({ outcome: 'kept', freesPlace: false });
      await vi.advanceTimersByTimeAsync(5_000);
      expect(writes).toHaveLength(1);
    });
  });

  it('closes once its writes in flight are done, and writes nothing after', async () => {
    await onFakeTimers(async () => {
      const { writes, writer, ending } = setup();
      const settled = writer.record(ending('a'));
      await nextTurn();
      let closed = false;
      const closing = writer.close().then(() => {
        closed = true;
      });
      await vi.advanceTimersByTimeAsync(100);
      expect(closed).toBe(false);
      writes[0]?.answer();
      expect((await settled).outcome).toBe('recorded');
      await vi.advanceTimersByTimeAsync(10);
      expect(closed).toBe(true);
      await closing;
      void writer.record(ending('b'));
      await nextTurn();
      expect(writes).toHaveLength(1);
    });
  });

  it('with a linger, keeps an end for others until the oldest has waited that long, or a write’s worth waits', async () => {
    await onFakeTimers(async () => {
      const { writes, ids, writer, ending } = setup({ lingerMs: 500 });
      const settled = [writer.record(ending('a'))];
      await nextTurn();
      await vi.advanceTimersByTimeAsync(300);
      settled.push(writer.record(ending('b')));
      await nextTurn();
      expect(writes).toHaveLength(0);
      // 500 ms after the first: both go in one write.
      await vi.advanceTimersByTimeAsync(200);
      expect(writes.map((_, write) => ids(write))).toEqual([['a', 'b']]);
      writes[0]?.answer();
      await Promise.all(settled);

      // A write's worth goes without waiting.
      const full = Array.from({ length: 100 }, (_, i) => writer.record(ending(`f-${i}`)));
      await nextTurn();
      expect(writes).toHaveLength(2);
      expect(ids(1)).toHaveLength(100);
      writes[1]?.answer();
      await Promise.all(full);
    });
  });

  describe('with a journal', () => {
    it('settles an end once the journal keeps it, before its write answers; records it behind, frees its place, and empties the journal once it holds nothing unrecorded', async () => {
      const journal = new MemoryEndJournal();
      const { store, writes, ids, writer, ending } = setup({ journal });
      store.openEvents.set('acme', 2);
      const settled = await Promise.all([writer.record(ending('a')), writer.record(ending('b'))]);
      expect(settled).toEqual([
        { outcome: 'journaled', freesPlace: false },
        { outcome: 'journaled', freesPlace: false },
      ]);
      expect(journal.kept.map(({ event }) => event.id)).toEqual(['a', 'b']);
      // Their write is still out: the journal holds them until it answers.
      expect(ids(0)).toEqual(['a', 'b']);
      expect(journal.clears).toBe(0);
      writes[0]?.answer();
      await vi.waitFor(() => expect(journal.clears).toBe(1));
      expect(journal.kept).toEqual([]);
      expect(store.records.get('a')?.state).toBe(EVENT_STATE.emitted);
      expect(store.openEvents.get('acme')).toBe(0);
    });

    it('with a linger, writes journaled ends once the publishes pause that long, or the oldest has waited 3 s: not during a spike, not even a write’s worth', async () => {
      await onFakeTimers(async () => {
        const { writes, ids, writer, ending } = setup({ lingerMs: 500, journal: new MemoryEndJournal() });
        const spike = Array.from({ length: 150 }, (_, i) => writer.record(ending(`s-${i}`)));
        expect(await Promise.all(spike)).toEqual(spike.map(() => ({ outcome: 'journaled', freesPlace: false })));
        expect(writes).toHaveLength(0);
        // An end every 400 ms keeps the publishes from pausing: the oldest goes once it has waited 3 s.
        for (let at = 400; at < 3000; at += 400) {
          await vi.advanceTimersByTimeAsync(400);
          await writer.record(ending(`t-${at}`));
        }
        expect(writes).toHaveLength(0);
        await vi.advanceTimersByTimeAsync(200);
        expect(writes.map((_, write) => ids(write).length)).toEqual([100, 57]);
        for (const write of writes) write.answer();

        // A lone end goes once 500 ms pass without another.
        await writer.record(ending('lone'));
        await vi.advanceTimersByTimeAsync(499);
        expect(writes).toHaveLength(2);
        await vi.advanceTimersByTimeAsync(1);
        expect(ids(2)).toEqual(['lone']);
      });
    });

    it('with a linger, writes a trickle of journaled ends (less than a write’s worth) once the oldest has lingered, though the publishes never pause', async () => {
      await onFakeTimers(async () => {
        const { writes, ids, writer, ending } = setup({ lingerMs: 500, journal: new MemoryEndJournal() });
        // An end every 100 ms, as a steady stream of publishes answers: never a pause of 500 ms.
        for (let at = 0; at < 500; at += 100) {
          expect(writes).toHaveLength(0);
          await writer.record(ending(`t-${at}`));
          await vi.advanceTimersByTimeAsync(100);
        }
        expect(writes.map((_, write) => ids(write))).toEqual([['t-0', 't-100', 't-200', 't-300', 't-400']]);
        writes[0]?.answer();
        await writer.record(ending('t-500'));
        await vi.advanceTimersByTimeAsync(500);
        expect(ids(1)).toEqual(['t-500']);
      });
    });

    it('records the ends a process before left in the journal, frees their places, then empties it; its replay settles once they are recorded', async () => {
      const journal = new MemoryEndJournal();
      const { store, writes, ids, writer, ending } = setup({ journal });
      store.openEvents.set('acme', 1);
      let replayed = false;
      const replay = writer.replay([ending('left')]).then(() => {
        replayed = true;
      });
      await nextTurn();
      expect(ids(0)).toEqual(['left']);
      // Nothing may poll the delay queue yet: a redelivered copy of `left` would find it open.
      expect(replayed).toBe(false);
      writes[0]?.answer();
      await replay;
      expect(store.records.get('left')?.state).toBe(EVENT_STATE.emitted);
      await vi.waitFor(() => expect(journal.clears).toBe(1));
      expect(store.openEvents.get('acme')).toBe(0);
    });

    it('keeps a journaled end whose write and hand-over both failed, and writes it again, rather than letting its message be published again', async () => {
      const journal = new MemoryEndJournal();
      const { writes, delayQueue, writer, ending, logger } = setup({ journal });
      delayQueue.refuseHandOvers = true;
      expect(await writer.record(ending('a'))).toEqual({ outcome: 'journaled', freesPlace: false });
      writes[0]?.fail(new TransientError('DynamoDB down'));
      await vi.waitFor(() => expect(writes).toHaveLength(2), { timeout: 3_000 });
      expect(logger.at('error')).toEqual([
        {
          level: 'error',
          fields: { err: expect.objectContaining({ message: 'SQS down' }), eventIds: ['a'] },
          message: 'emitted, but could not record it nor hand it over; the journal keeps the ends, written again shortly',
        },
      ]);
      expect(journal.clears).toBe(0);
      writes[1]?.answer();
      await vi.waitFor(() => expect(journal.clears).toBe(1));
    });

    it('appends one batch at a time: the ends answered while an append is out go together in the next, once it answers', async () => {
      const journal = new MemoryEndJournal();
      journal.hold = true;
      const { writer, ending } = setup({ journal });
      const first = writer.record(ending('a'));
      await nextTurn();
      const next = [writer.record(ending('b')), writer.record(ending('c'))];
      await nextTurn();
      const appended = () => journal.appends.map(({ ends }) => ends.map(({ event }) => event.id));
      expect(appended()).toEqual([['a']]);
      journal.appends[0]?.answer();
      expect(await first).toEqual({ outcome: 'journaled', freesPlace: false });
      // Their writes are still out: only the end of the first append sends the second.
      await vi.waitFor(() => expect(appended()).toEqual([['a'], ['b', 'c']]));
      journal.appends[1]?.answer();
      expect(await Promise.all(next)).toEqual(next.map(() => ({ outcome: 'journaled', freesPlace: false })));
    });

    it('settles an end recorded before the journal kept it as recorded, empties the journal only once no append is on its way, and keeps a later end there until it is recorded', async () => {
      const journal = new MemoryEndJournal();
      journal.hold = true;
      const { writes, ids, writer, ending } = setup({ journal });
      const settled = writer.record(ending('a'));
      await nextTurn();
      writes[0]?.answer();
      expect(await settled).toEqual({ outcome: 'recorded', freesPlace: true });
      await nextTurn();
      expect(journal.clears).toBe(0);
      journal.appends[0]?.answer();
      await vi.waitFor(() => expect(journal.clears).toBe(1));

      journal.hold = false;
      expect(await writer.record(ending('b'))).toEqual({ outcome: 'journaled', freesPlace: false });
      await nextTurn();
      expect(ids(1)).toEqual(['b']);
      expect(journal.clears).toBe(1);
      writes[1]?.answer();
      await vi.waitFor(() => expect(journal.clears).toBe(2));
    });

    it('keeps the journal while an end a process before left in it is unrecorded, though later ends were kept and recorded', async () => {
      const journal = new MemoryEndJournal();
      const { writes, ids, writer, ending } = setup({ journal });
      void writer.replay([ending('left')]);
      await nextTurn();
      expect(await writer.record(ending('new'))).toEqual({ outcome: 'journaled', freesPlace: false });
      expect(ids(1)).toEqual(['new']);
      writes[1]?.answer();
      await nextTurn();
      expect(journal.clears).toBe(0);
      writes[0]?.answer();
      await vi.waitFor(() => expect(journal.clears).toBe(1));
    });

    it('closes once its append in flight is done too, and neither appends nor writes after', async () => {
      await onFakeTimers(async () => {
        const journal = new MemoryEndJournal();
        journal.hold = true;
        const { writes, writer, ending } = setup({ journal });
        void writer.record(ending('a'));
        await nextTurn();
        let closed = false;
        const closing = writer.close().then(() => {
          closed = true;
        });
        writes[0]?.answer();
        await vi.advanceTimersByTimeAsync(100);
        expect(closed).toBe(false);
        journal.appends[0]?.answer();
        await vi.advanceTimersByTimeAsync(10);
        expect(closed).toBe(true);
        await closing;
        void writer.record(ending('b'));
        void writer.replay([ending('left')]);
        await nextTurn();
        expect(journal.appends).toHaveLength(1);
        expect(writes).toHaveLength(1);
      });
    });

    it('writes as without a journal once the journal refuses ends: with a linger, a write’s worth at once', async () => {
      await onFakeTimers(async () => {
        const journal = new MemoryEndJournal();
        journal.refuse = true;
        const { writes, ids, writer, ending } = setup({ lingerMs: 500, journal });
        const full = Array.from({ length: 100 }, (_, i) => writer.record(ending(`f-${i}`)));
        await nextTurn();
        await nextTurn();
        expect(writes.map((_, write) => ids(write).length)).toEqual([100]);
        writes[0]?.answer();
        expect(new Set((await Promise.all(full)).map(({ outcome }) => outcome))).toEqual(new Set(['recorded']));
      });
    });

    it('settles an end the journal could not take once it is recorded, as without a journal', async () => {
      const journal = new MemoryEndJournal();
      journal.refuse = true;
      const { writes, writer, ending, logger } = setup({ journal });
      const settled = writer.record(ending('a'));
      await nextTurn();
      writes[0]?.answer();
      expect(await settled).toEqual({ outcome: 'recorded', freesPlace: true });
      expect(logger.at('warn')).toEqual([
        {
          level: 'warn',
          fields: { err: new Error('disk full'), ends: 1 },
          message: 'could not keep ends in the journal; they settle once recorded',
        },
      ]);
    });

    it('warns of a journal it cannot empty, and records its ends all the same', async () => {
      const journal = new MemoryEndJournal();
      journal.refuseClears = true;
      const { store, writes, writer, ending, logger } = setup({ journal });
      expect(await writer.record(ending('a'))).toEqual({ outcome: 'journaled', freesPlace: false });
      writes[0]?.answer();
      await vi.waitFor(() => expect(journal.clears).toBe(1));
      expect(store.records.get('a')?.state).toBe(EVENT_STATE.emitted);
      expect(logger.at('warn')).toEqual([
        { level: 'warn', fields: { err: new Error('disk gone') }, message: 'could not empty the journal of recorded ends' },
      ]);
    });

    it('does not empty the journal while an end that answered waits to be appended: a slow clear would forget it', async () => {
      const journal = new MemoryEndJournal();
      journal.holdClears = true;
      const { writes, ids, writer, ending } = setup({ journal });
      expect(await writer.record(ending('a'))).toEqual({ outcome: 'journaled', freesPlace: false });
      // 'b' answers just before the write of 'a' does, and is appended on the next turn.
      const later = writer.record(ending('b'));
      writes[0]?.answer();
      expect(await later).toEqual({ outcome: 'journaled', freesPlace: false });
      for (const answer of journal.heldClears) answer();
      await nextTurn();
      expect(ids(1)).toEqual(['b']);
      expect(journal.kept.map(({ event }) => event.id)).toContain('b');
    });
  });
});
