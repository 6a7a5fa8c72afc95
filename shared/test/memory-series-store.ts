import type { ChangeRequest } from '../src/app/ports/event-store.js';
import type {
  SeriesAdvance,
  SeriesAdvanceOutcome,
  SeriesCancelOutcome,
  SeriesChangeWrite,
  SeriesCreateOutcome,
  SeriesEntry,
  SeriesStore,
} from '../src/app/ports/series-store.js';
import { followsLastChange, type SeriesRevision } from '../src/domain/series-changes.js';
import { SERIES_STATE, type SeriesRecord } from '../src/domain/series.js';
import type { LabelEntry, MemoryEventStore } from './memory-event-store.js';

/** The series' records in memory, their places counted in the event store's open events, as the DynamoDB store counts them. */
export class MemorySeriesStore implements SeriesStore {
  readonly records = new Map<string, SeriesRecord>();
  private readonly payloads = new Map<string, string>();
  /** What a cancel by label finds a series by: an entry per label at its first occurrence, as the DynamoDB store writes them. */
  readonly labelEntries: LabelEntry[] = [];

  constructor(private readonly events: MemoryEventStore) {}

  async create(entry: SeriesEntry): Promise<SeriesCreateOutcome> {
    const { series } = entry;
    const existing = this.records.get(series.id);
    if (existing !== undefined) return { outcome: 'duplicate', existing };
    if (entry.placeHeld !== true) {
      const open = this.events.openEvents.get(series.tenant) ?? 0;
      if (open >= entry.quotas.maxOpenEvents) return { outcome: 'quota-exceeded', quota: 'maxOpenEvents' };
      this.events.openEvents.set(series.tenant, open + 1);
    }
    const { payload, cursor, ...content } = series;
    const record: SeriesRecord = {
      ...content,
      state: SERIES_STATE.active,
      cursor,
      version: 1,
      dueAt: entry.dueAt,
      payloadKept: 'record',
      inputMessageId: entry.inputMessageId,
      createdAt: entry.now,
      expiresAt: entry.expiresAt,
    };
    this.records.set(series.id, record);
    this.payloads.set(series.id, payload);
    for (const label of series.labels ?? []) this.labelEntries.push({ tenant: series.tenant, label, id: series.id, dueAt: entry.dueAt });
    return { outcome: 'created', record };
  }

  async read(ids: readonly string[]): Promise<ReadonlyMap<string, SeriesRecord>> {
    return new Map(ids.flatMap((id) => (this.records.has(id) ? [[id, this.records.get(id) as SeriesRecord]] : [])));
  }

  async payload(series: SeriesRecord): Promise<string> {
    return this.payloads.get(series.id) ?? '';
  }

  async advance(series: SeriesRecord, step: SeriesAdvance): Promise<SeriesAdvanceOutcome> {
    const current = this.records.get(series.id);
    if (current?.state !== SERIES_STATE.active || current.version !== series.version) return { advanced: false };
    const completed = step.next === undefined;
    this.records.set(series.id, {
      ...current,
      cursor: step.cursor,
      owed: step.owed,
      caughtUp: step.caughtUp,
      version: current.version + 1,
      dueAt: step.next,
      expiresAt: step.expiresAt,
      ...(completed ? { state: SERIES_STATE.completed } : {}),
    });
    if (completed && step.placeFreedByCaller !== true)
      this.events.openEvents.set(series.tenant, (this.events.openEvents.get(series.tenant) ?? 0) - 1);
    return { advanced: true };
  }

  async change(series: SeriesRecord, revision: SeriesRevision, write: SeriesChangeWrite): Promise<SeriesRecord | undefined> {
    const current = this.records.get(series.id);
    if (current?.state !== SERIES_STATE.active || current.tenant !== series.tenant || current.version !== series.version) return undefined;
    if (!followsLastChange(current, write)) return undefined;
    const { payload, ...fields } = revision;
    const { owed: _owed, ...kept } = current;
    const changed: SeriesRecord = {
      ...kept,
      ...fields,
      version: current.version + 1,
      lastChangeAt: write.publishedAt,
      lastChangeBy: write.by,
      ...(revision.pausedAt === undefined ? { expiresAt: write.expiresAt } : {}),
    };
    this.records.set(series.id, changed);
    if (payload !== undefined) this.payloads.set(series.id, payload);
    return changed;
  }

  async cancel(id: string, tenant: string, change: ChangeRequest & { readonly expiresAt: number }): Promise<SeriesCancelOutcome> {
    const current = this.records.get(id);
    if (current === undefined || current.tenant !== tenant || current.state !== SERIES_STATE.active) return { outcome: 'refused', current };
    const cancelled: SeriesRecord = {
      ...current,
      state: SERIES_STATE.cancelled,
      cancelledBy: change.by,
      dueAt: undefined,
      expiresAt: change.expiresAt,
    };
    this.records.set(id, cancelled);
    this.events.openEvents.set(tenant, (this.events.openEvents.get(tenant) ?? 0) - 1);
    return { outcome: 'cancelled', series: { ...current, state: SERIES_STATE.cancelled, cancelledBy: change.by } };
  }
}
