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

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Sends a signal to a process group, if it is still there. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Gone already.
  }
}
