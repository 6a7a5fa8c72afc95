import {
  endCountsItemId,
  ID_PREFIX,
  jobItemId,
  LAST_ERROR_ID_PREFIX,
  LOADER_CURSOR_ID,
  openEventsCounterId,
  PAYLOAD_ITEM_ID_PREFIX,
  refusalCounterId,
  TABLE_LAYOUT,
} from '@adhoc-scheduler/shared';

/**
 * What kind of item of the scheduler's table an id names (see table-keys.ts), so that the write
 * units a run consumed can be told apart by what they wrote: an event's record, a series, a
 * counter, an occurrence.
 */
const KINDS: readonly (readonly [prefix: string, kind: string])[] = [
  [ID_PREFIX.occurrence, 'occurrence'],
  [ID_PREFIX.series, 'series'],
  [ID_PREFIX.messageEvent, 'event'],
  [ID_PREFIX.clientEvent, 'event'],
  [ID_PREFIX.notice, 'notice'],
  [PAYLOAD_ITEM_ID_PREFIX, 'payload'],
  ['l#', 'label entry'],
  [jobItemId(''), 'job'],
  [LAST_ERROR_ID_PREFIX, 'last error'],
  [openEventsCounterId(''), 'tenant counters'],
  // The prefix of every tenant's minutes: the id up to its tenant.
  [endCountsItemId('', 0).slice(0, -'#0'.length), 'end counts'],
  [LOADER_CURSOR_ID, 'loader cursor'],
  [refusalCounterId(''), 'refusals'],
];

export function itemKind(id: string): string {
  return KINDS.find(([prefix]) => id.startsWith(prefix))?.[1] ?? 'other';
}

type Item = Readonly<Record<string, unknown>> | undefined;
interface WriteInput {
  readonly Item?: Item;
  readonly Key?: Item;
  readonly TransactItems?: readonly {
    readonly Put?: { readonly Item?: Item };
    readonly Update?: { readonly Key?: Item };
    readonly Delete?: { readonly Key?: Item };
    readonly ConditionCheck?: { readonly Key?: Item };
  }[];
  readonly RequestItems?: Readonly<
    Record<string, readonly { readonly PutRequest?: { readonly Item?: Item }; readonly DeleteRequest?: { readonly Key?: Item } }[]>
  >;
}

/** The ids of the items a write names, one per item written (statements, which name theirs in text, give none). */
export function writtenIds(input: WriteInput): string[] {
  const id = (item: Item): string[] => {
    const value = item?.[TABLE_LAYOUT.partitionKey.name];
    return typeof value === 'string' ? [value] : [];
  };
  if (input.TransactItems)
    return input.TransactItems.flatMap((entry) =>
      id(entry.Put?.Item ?? entry.Update?.Key ?? entry.Delete?.Key ?? entry.ConditionCheck?.Key),
    );
  if (input.RequestItems)
    return Object.values(input.RequestItems).flatMap((requests) =>
      requests.flatMap((request) => id(request.PutRequest?.Item ?? request.DeleteRequest?.Key)),
    );
  return id(input.Item ?? input.Key);
}

/** Adds a write's units to its items' kinds, shared evenly among the items it wrote. */
export function addByKind(byKind: Record<string, number>, input: WriteInput, units: number): void {
  const ids = writtenIds(input);
  const kinds = ids.length === 0 ? ['unnamed'] : ids.map(itemKind);
  for (const kind of kinds) byKind[kind] = (byKind[kind] ?? 0) + units / kinds.length;
}
