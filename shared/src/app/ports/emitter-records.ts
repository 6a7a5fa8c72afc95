import type { EmissionEnding } from '../../domain/emission.js';

/** What the emitter keeps so that a notice is published once and no end is lost: claims on failure notices, and its journal of ends. */

export interface NoticeClaim {
  readonly owner: string;
  readonly now: number;
  readonly leaseUntil: number;
}

/** Claims on publishing failure notices, keyed like events, so a redelivered notice is published once. */
export interface NoticeClaims {
  /** Claims a notice's publication; its record is kept until `expiresAt` (epoch seconds). */
  claim(noticeId: string, claim: NoticeClaim, expiresAt: number): Promise<'claimed' | 'ended' | 'busy'>;
  /** Gives up a claim after a failed publish, so the retry need not wait for the lease. */
  release(noticeId: string, owner: string): Promise<void>;
  markSent(noticeId: string, sentAt: number): Promise<void>;
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
