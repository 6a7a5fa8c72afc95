import { execFileSync } from 'node:child_process';

export interface ProcessRow {
  readonly pid: number;
  readonly ppid: number;
  readonly pgid: number;
  readonly command: string;
}

/** `ps -e -o pid=,ppid=,pgid=,args=` as rows. */
export function parsePs(text: string): ProcessRow[] {
  return text.split('\n').flatMap((line) => {
    const match = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(.*)$/.exec(line);
    return match ? [{ pid: Number(match[1]), ppid: Number(match[2]), pgid: Number(match[3]), command: match[4] ?? '' }] : [];
  });
}

/** Every process below `root`, children before their own children. */
export function descendantsOf(rows: readonly ProcessRow[], root: number): ProcessRow[] {
  const found: ProcessRow[] = [];
  const parents = [root];
  for (let parent = parents.shift(); parent !== undefined; parent = parents.shift()) {
    for (const row of rows) {
      if (row.ppid !== parent) continue;
      found.push(row);
      parents.push(row.pid);
    }
  }
  return found;
}

export function processTable(): ProcessRow[] {
  return parsePs(execFileSync('ps', ['-e', '-o', 'pid=,ppid=,pgid=,args='], { encoding: 'utf8' }));
}

/**
 * Of the processes recorded, those still running as recorded: the same pid, process group and
 * command in the table now. A pid alone is not enough: on a busy machine an ended process's pid,
 * and its group's, soon belong to some other program, which a signal to them would kill.
 */
export function stillRunning(recorded: readonly ProcessRow[], now: readonly ProcessRow[]): ProcessRow[] {
  const current = new Map(now.map((row) => [row.pid, row]));
  return recorded.filter((row) => {
    const found = current.get(row.pid);
    return found !== undefined && found.pgid === row.pgid && found.command === row.command;
  });
}

/** Sends a signal to a process group, if it is still there. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Gone already.
  }
}
