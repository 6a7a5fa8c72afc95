import { appendFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EmissionEnding } from '@adhoc-scheduler/shared';
import { describe, expect, it } from 'vitest';
import { FileEndJournal } from '../src/local/end-journal.js';

const ending = (id: string): EmissionEnding => ({
  event: { id, tenant: 'acme', version: 1, dueAt: 900 },
  end: { state: 'emitted', at: 1_000 },
  expiresAt: 2,
  endedBy: `delivery-${id}`,
});

const journalPath = async () => join(await mkdtemp(join(tmpdir(), 'end-journal-')), 'data', 'emitter-ends.jsonl');

describe('the emitter’s journal of ends on disk', () => {
  it('gives the next process the ends a process kept and did not clear, whole', async () => {
    const path = await journalPath();
    const first = await FileEndJournal.open(path);
    expect(first.left).toEqual([]);
    await first.journal.keep([ending('a'), ending('b')]);
    await first.journal.keep([ending('c')]);
    // No close: a kill -9 ends the process as it stands.
    const next = await FileEndJournal.open(path);
    expect(next.left).toEqual([ending('a'), ending('b'), ending('c')]);
    await first.journal.close();
    await next.journal.close();
  });

  it('forgets what it kept once cleared, and keeps what is appended after, in the order asked', async () => {
    const path = await journalPath();
    const { journal } = await FileEndJournal.open(path);
    await journal.keep([ending('recorded')]);
    // Asked one after the other without waiting: the clear never drops the append asked after it.
    await Promise.all([journal.clear(), journal.keep([ending('after')])]);
    expect((await FileEndJournal.open(path)).left).toEqual([ending('after')]);
    await journal.close();
  });

  it('drops a line a kill cut short (its append never answered, so its messages were kept), and appends after it whole', async () => {
    const path = await journalPath();
    const { journal } = await FileEndJournal.open(path);
    await journal.keep([ending('whole')]);
    await journal.close();
    await appendFile(path, '{"kind":"ends","ends":[{"event":{"id":"cut');
    const next = await FileEndJournal.open(path);
    expect(next.left).toEqual([ending('whole')]);
    await next.journal.keep([ending('next')]);
    await next.journal.close();
    expect((await FileEndJournal.open(path)).left).toEqual([ending('whole'), ending('next')]);
  });
});
