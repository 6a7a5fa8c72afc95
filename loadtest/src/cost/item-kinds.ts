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
  readonly ConditionExpression?: string;
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

/** How many writes of one shape were made, the items they named, and the units they consumed. */
export interface WriteShapeUsage {
  readonly requests: number;
  readonly items: number;
  readonly units: number;
}

/**
 * The shape of a write: its operation, whether a single item's write is conditional, and the
 * kinds of the items it names, each once in the order they come (`UpdateItem (conditional):
 * tenant counters`, `TransactWriteItems: series + tenant counters`). Units over requests is
 * what one such write costs, which tells a large item from many writes.
 */
export function writeShape(operation: string, input: WriteInput): string {
  const ids = writtenIds(input);
  const kinds = ids.length === 0 ? ['unnamed'] : [...new Set(ids.map(itemKind))];
  return `${operation}${input.ConditionExpression === undefined ? '' : ' (conditional)'}: ${kinds.join(' + ')}`;
}

/** Adds one write to its shape's counts (see writeShape). */
export function addByShape(
  byShape: Record<string, { requests: number; items: number; units: number }>,
  operation: string,
  input: WriteInput,
  units: number,
): void {
  const shape = writeShape(operation, input);
  byShape[shape] ??= { requests: 0, items: 0, units: 0 };
  const entry = byShape[shape];
  entry.requests += 1;
  entry.items += Math.max(1, writtenIds(input).length);
  entry.units += units;
}
