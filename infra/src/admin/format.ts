/** Where a command writes: results on `out` (stdout, for scripts), commentary and errors on `err`. */
export interface Output {
  out(text: string): void;
  err(text: string): void;
}

/** C0, DEL and C1: the characters a terminal takes as commands (escape sequences, OSC, a bell, a carriage return). */
export function isControlCharacter(code: number): boolean {
  return code <= 0x1f || (code >= 0x7f && code <= 0x9f);
}

/**
 * Text as the tools print it: each control character written as its escape (`\u001b`). What they
 * print was mostly written by others (users, ids, labels, notes, dead letters' bodies, which any
 * publisher may shape), and none of it may drive the operator's terminal.
 */
export function printable(text: string): string {
  let shown = '';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    shown += isControlCharacter(code) ? `\\u${code.toString(16).padStart(4, '0')}` : char;
  }
  return shown;
}

/**
 * An output that prints every line through `printable`: a command's own line breaks stay, nothing
 * else passes (JSON stays JSON: a control character can only stand in one of its strings).
 */
export function printableOutput(output: Output): Output {
  const lines = (text: string) => text.split('\n').map(printable).join('\n');
  return { out: (text) => output.out(lines(text)), err: (text) => output.err(lines(text)) };
}

/** An epoch-milliseconds time as ISO 8601 (UTC). */
export function iso(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

/** A count with thousands separators, as the help texts write them. */
export function count(value: number): string {
  return value.toLocaleString('en-US');
}

/** Rows as aligned columns, two spaces apart; the last column is not padded. A cell is one line, its control characters escaped. */
export function table(cells: readonly (readonly string[])[]): string {
  const rows = cells.map((row) => row.map(printable));
  const widths: number[] = [];
  for (const row of rows) {
    for (const [column, cell] of row.entries()) widths[column] = Math.max(widths[column] ?? 0, cell.length);
  }
  return rows
    .map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join('  '))
    .join('\n');
}

/** Label-value lines, values aligned; a value is one line, its control characters escaped. */
export function fields(pairs: readonly (readonly [string, string])[]): string {
  const width = Math.max(...pairs.map(([label]) => label.length));
  return pairs.map(([label, value]) => `${label.padEnd(width)}  ${printable(value)}`).join('\n');
}
