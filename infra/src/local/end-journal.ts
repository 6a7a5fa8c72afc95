import { type FileHandle, mkdir, open, readFile, truncate } from 'node:fs/promises';
import { dirname } from 'node:path';
import { decodeDelayQueueMessage, type EmissionEnding, type EndJournal, encodeDelayQueueMessage } from '@adhoc-scheduler/shared';

/**
 * The local emitter's journal of ends published and not yet recorded (see EndWriter): a file in
 * the service's data directory, one line per append, in the delay queue's own encoding of handed-
 * over ends. An append resolves once the file has it (written, not synced: like the SNS/SQS
 * emulator's file, it survives a kill -9 of the service whole, and only a crash of the machine can
 * lose its last moments, whose events stay open and are published again by the loader's repair,
 * late). A sync per append stalled the emulators' own disk writes beside it, on the due second.
 * Appends and the emptying go one after the other, in the order asked, so an emptying never drops
 * an append asked for after it.
 */
export class FileEndJournal implements EndJournal {
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(private readonly file: FileHandle) {}

  /** Opens the journal at `path` (created if absent), with the ends a process before left in it. */
  static async open(path: string): Promise<{ readonly journal: FileEndJournal; readonly left: EmissionEnding[] }> {
    const bytes = await readFile(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return Buffer.alloc(0);
      throw error;
    });
    // A line a kill cut short: its append never answered, so its messages were kept. It goes, so
    // that the next append starts a line of its own.
    const whole = bytes.lastIndexOf(0x0a) + 1;
    if (whole < bytes.length) await truncate(path, whole);
    const left = bytes
      .subarray(0, whole)
      .toString('utf8')
      .split('\n')
      .flatMap((line) => {
        if (line === '') return [];
        try {
          const message = decodeDelayQueueMessage(line);
          return message.kind === 'ends' ? [...message.ends] : [];
        } catch {
          // Not one of ours: nothing in it can be recorded.
          return [];
        }
      });
    await mkdir(dirname(path), { recursive: true });
    return { journal: new FileEndJournal(await open(path, 'a')), left };
  }

  keep(ends: readonly EmissionEnding[]): Promise<void> {
    return this.inTurn(() => this.file.appendFile(`${encodeDelayQueueMessage({ kind: 'ends', ends })}\n`));
  }

  clear(): Promise<void> {
    return this.inTurn(() => this.file.truncate(0));
  }

  close(): Promise<void> {
    return this.inTurn(() => this.file.close());
  }

  private inTurn(step: () => Promise<void>): Promise<void> {
    const done = this.queue.then(step);
    this.queue = done.catch(() => undefined);
    return done;
  }
}

/**
 * The journal of a service whose emulators live in memory and die with it: a kill loses the
 * table's state with the process's, so an end kept in the process is as safe as one recorded, and
 * its message may go at once. The end writer then records a spike's ends after it (see EndWriter).
 */
export class ProcessEndJournal implements EndJournal {
  async keep(): Promise<void> {}

  async clear(): Promise<void> {}

  async close(): Promise<void> {}
}
