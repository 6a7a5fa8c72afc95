import type { RegistryChanges } from '../../domain/registry-changes.js';
import type { PublicTenantSettings, Tenant, TenantEntry, TenantsDocument } from '../../domain/tenants.js';
import type { ChangeRequest } from './event-store.js';

/** Tenants: who a message belongs to, their pauses, and their open events counted (the quota's counter, and a census of the events). */

/**
 * Tenants as registered, for one batch's work: read once for the batch (the registry may be data
 * read through a cache, CachedTenantDirectory) and answered from then on without waiting.
 */
export interface TenantDirectory {
  /** The tenants these ids and input topics name, and what the registry says of the accounts named (see WantedTenants). */
  lookup(wanted: WantedTenants): Promise<TenantLookup>;
  /** Every registered tenant's id, the public one included: only for work whose size is the registry's (a migration's). */
  ids(): Promise<readonly string[]>;
}

/** What a batch asks of the registry. */
export interface WantedTenants {
  readonly ids?: readonly string[];
  readonly topicArns?: readonly string[];
  /**
   * Accounts of the topics the batch's requests or events name, as target or failure topic: a
   * tenant that may target any account (the public one, unless restricted) is checked against
   * them being another tenant's own (see mayPublishTo).
   */
  readonly accounts?: readonly string[];
}

/** Who a message belongs to, by the input topic it arrived on; and each tenant by id. */
export interface TenantLookup {
  forTopic(topicArn: string): Tenant | undefined;
  tenant(id: string): Tenant | undefined;
}

/** The registry kept as data, read by key: what CachedTenantDirectory reads. */
export interface TenantRegistryReads {
  /** The entries of those of these tenants that are registered (the public tenant is not: see publicSettings). */
  entries(ids: readonly string[]): Promise<ReadonlyMap<string, TenantEntry>>;
  /** The public tenant's settings; none written: its defaults. */
  publicSettings(): Promise<PublicTenantSettings>;
  /** The registered tenants whose own accounts these are, by account; an account no tenant owns is left out. */
  owners(accounts: readonly string[]): Promise<ReadonlyMap<string, readonly string[]>>;
  /** Every registered tenant's id. */
  ids(): Promise<readonly string[]>;
}

/** The registry kept as data, whole: read, and written as the changes from one registry to another. */
export interface TenantRegistryTable {
  read(): Promise<TenantsDocument>;
  write(changes: RegistryChanges): Promise<void>;
  /** Lists by id the entries an earlier version wrote without (once); how many it listed. */
  listEveryEntry(): Promise<number>;
}

/**
 * Whose pause: the tenant's own (its requests), or its operator's, which is containment: the
 * tenant's requests neither lift nor shorten it.
 */
export type PauseOwner = 'tenant' | 'operator';

/** A tenant's pause: since when, why, who asked (an input message's id, or an operator's name), and whose it is. */
export interface Pause {
  readonly pausedAt: number;
  readonly note?: string | undefined;
  readonly pausedBy: string;
  readonly owner: PauseOwner;
}

/** Who pauses or resumes: the tenant, by a request applied in publish order; or an operator. */
export type PauseAuthor =
  | { readonly owner: 'tenant'; readonly request: ChangeRequest }
  | { readonly owner: 'operator'; readonly name: string };

/** What a resume did. */
export interface ResumeOutcome {
  /** False when a pause or resume the tenant published later was applied already: this one changes nothing. */
  readonly applied: boolean;
  /** The author's pause it ended, if there was one. */
  readonly ended: Pause | undefined;
  /** The pause still in force, the other owner's: the tenant stays paused. */
  readonly stillPaused: Pause | undefined;
}

/**
 * Tenants' pauses, kept on their quota counters' items: while a tenant is paused, by itself or
 * by its operator, the emitter holds its events as they come due (see EVENT_STATE.held). The
 * tenant's pause and its operator's are kept apart, each ended only by its own owner's resume.
 */
export interface TenantPauses {
  /**
   * Pauses a tenant as `author`; a tenant paused already by the same owner keeps its `pausedAt`
   * and takes the new note. False when the tenant published a later pause or resume (or this
   * one) already: nothing changes.
   */
  pause(tenant: string, author: PauseAuthor, pause: { readonly pausedAt: number; readonly note: string | undefined }): Promise<boolean>;
  /** Ends the author's pause of a tenant (see ResumeOutcome); `now` stamps its pause mark. */
  resume(tenant: string, author: PauseAuthor, now: number): Promise<ResumeOutcome>;
  /** The pauses of those of these tenants that are paused: the operator's when there is one, else the tenant's own. */
  paused(tenants: readonly string[]): Promise<ReadonlyMap<string, Pause>>;
  /**
   * The tenants marked by a pause and not cleared since: the only ones that may have held events.
   * A pause marks its tenant in the same write; `stamp` is the time of its last pause or resume.
   */
  pauseMarks(): Promise<readonly PauseMark[]>;
  /** Clears a tenant's mark, unless it is paused, or was paused or resumed again since the mark was read. */
  clearPauseMark(mark: PauseMark): Promise<void>;
  /** The input message of the last pause or resume the tenant's requests applied (read consistently); undefined before the first. */
  lastChange(tenant: string): Promise<string | undefined>;
}

/** A tenant marked by a pause (see TenantPauses.pauseMarks). */
export interface PauseMark {
  readonly tenant: string;
  /** Epoch ms of its last pause or resume. */
  readonly stamp: number;
}

/** The counter a tenant's open-events quota is taken from. */
export interface OpenEventsCounter {
  openEvents(tenant: string): Promise<number>;
  correctOpenEvents(tenant: string, delta: number): Promise<void>;
}

/** A count of a tenant's open events from the events themselves (a scan). */
export interface OpenEventsCensus {
  countOpen(tenant: string): Promise<number>;
}
