/** Where a command writes: results on `out` (stdout, for scripts), commentary and errors on `err`. */
export interface Output {
  out(text: string): void;
  err(text: string): void;
}

/** An epoch-milliseconds time as ISO 8601 (UTC). */
export function iso(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

/** A count with thousands separators, as the help texts write them. */
export function count(value: number): string {
  return value.toLocaleString('en-US');
}

/** Rows as aligned columns, two spaces apart; the last column is not padded. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [column, cell] of row.entries()) widths[column] = Math.max(widths[column] ?? 0, cell.length);
  }
  return rows
    .map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join('  '))
    .join('\n');
}

/** Label-value lines, values aligned. */
export function fields(pairs: readonly (readonly [string, string])[]): string {
  const width = Math.max(...pairs.map(([label]) => label.length));
  return pairs.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n');
}
