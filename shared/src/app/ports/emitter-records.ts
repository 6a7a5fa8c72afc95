import type { EmissionEnding } from '../../domain/emission.js';

/** What the emitter keeps so that a notice is published once and no end is lost: failure notices' sent marks, and its journal of ends. */

/**
 * Which failure notices were published, keyed like events: the emitter reads them before it
 * publishes and marks each after, as it decides events by reading, not by claiming.
 */
export interface NoticeMarks {
  /** Of these notices, those marked sent. */
  sent(noticeIds: readonly string[]): Promise<ReadonlySet<string>>;
  /**
   * Marks a notice sent, its mark kept until `expiresAt` (epoch seconds): 'marked-before' when a
   * mark was there already, that is another delivery published it too, at the same time.
   */
  markSent(noticeId: string, sentAt: number, expiresAt: number): Promise<'marked' | 'marked-before'>;
}

/**
 * Where one emitter process keeps the ends it has published and not yet recorded, durably (the
 * local service on disk: a file): settled there, their messages may go, and the next process
 * records what a crash left (see EndWriter).
 */
export interface EndJournal {
  /** Keeps ends; resolves once they would survive whatever the table's own state survives (a kill of the process, on disk). */
  keep(ends: readonly EmissionEnding[]): Promise<void>;
  /** Forgets every end kept so far: each is recorded or handed over. */
  clear(): Promise<void>;
}
