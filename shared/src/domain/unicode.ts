/**
 * JSON's `\u` escapes can carry a lone UTF-16 surrogate, which is no Unicode character: the SDK
 * cannot encode a string holding one into an SNS or SQS request. These find and replace them in
 * a parsed JSON value (nested no deeper than the caller allows: they recurse).
 */

/** Where a value holds a string that is not well-formed: the path of the key or value, and which it is. */
export interface IllFormedString {
  /** Keys from the top, joined by `/` (`payload`, `tags/0`), each made well-formed. */
  readonly path: string;
  /** The key at `path` is ill-formed, rather than its value. */
  readonly inKey: boolean;
}

function entriesOf(value: object): [string, unknown][] {
  return Array.isArray(value) ? value.map((item: unknown, index): [string, unknown] => [String(index), item]) : Object.entries(value);
}

/** The first string of a parsed JSON value, key or value, that is not well-formed Unicode; undefined when all are. */
export function firstIllFormedString(value: unknown, path = ''): IllFormedString | undefined {
  if (typeof value === 'string') return value.isWellFormed() ? undefined : { path, inKey: false };
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, item] of entriesOf(value)) {
    const itemPath = path === '' ? key.toWellFormed() : `${path}/${key.toWellFormed()}`;
    if (!key.isWellFormed()) return { path: itemPath, inKey: true };
    const found = firstIllFormedString(item, itemPath);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** A copy of a parsed JSON value with each lone surrogate, in keys and values, replaced by U+FFFD. */
export function wellFormedCopy(value: unknown): unknown {
  if (typeof value === 'string') return value.toWellFormed();
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(wellFormedCopy);
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key.toWellFormed(), wellFormedCopy(item)]));
}
