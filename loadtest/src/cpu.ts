import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time of the run's processes and of the whole machine, from /proc (Linux): on a 2-core
 * machine the harness, the service and both emulators compete for the same cores, and so does
 * anything else running. Elsewhere the numbers are simply absent.
 */

/** Kernel clock ticks per second (USER_HZ); 100 on every Linux architecture Node runs on. */
const TICKS_PER_SECOND = 100;

interface ProcessTicks {
  readonly name: string;
  readonly ticks: number;
}

export interface CpuSample {
  readonly at: number;
  /** Busy and total ticks of all cores since boot. */
  readonly machineBusy: number;
  readonly machineTotal: number;
  readonly processes: ReadonlyMap<number, ProcessTicks>;
}

/** Average cores busy over the interval: per process of the run, the run in all, the machine, and everything else. */
export interface CpuUse {
  readonly seconds: number;
  readonly cores: number;
  readonly machineBusyCores: number;
  readonly byProcess: Readonly<Record<string, number>>;
  readonly othersCores: number;
}

function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces; the fields follow it.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** What a process of the run is, from its command line. */
function roleOf(pid: number, harnessPid: number): string {
  if (pid === harnessPid) return 'harness';
  let command = '';
  try {
    command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return `pid ${pid}`;
  }
  if (command.includes('DynamoDBLocal')) return 'DynamoDB Local';
  if (command.includes('fauxqs')) return 'fauxqs';
  if (command.includes('child-main')) return 'service';
  if (command.includes('esbuild')) return 'esbuild';
  return command.split(' ')[0]?.split('/').pop() ?? `pid ${pid}`;
}

/** The harness and all its descendants (the service's child and the emulators it started). */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const parent = Number(statFields(pid)?.[1]);
    if (Number.isInteger(parent)) children.set(parent, [...(children.get(parent) ?? []), pid]);
  }
  const tree: number[] = [];
  const pending = [root];
  while (pending.length > 0) {
    const pid = pending.pop() as number;
    tree.push(pid);
    pending.push(...(children.get(pid) ?? []));
  }
  return tree;
}

export function sampleCpu(): CpuSample | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const values = line.trim().split(/\s+/).slice(1).map(Number);
    const idle = (values[3] ?? 0) + (values[4] ?? 0);
    const total = values.slice(0, 8).reduce((sum, value) => sum + value, 0);
    const processes = new Map<number, ProcessTicks>();
    for (const pid of processTree(process.pid)) {
      const fields = statFields(pid);
      if (!fields) continue;
      // utime and stime: fields 14 and 15 of stat, 11 and 12 after the name.
      processes.set(pid, { name: roleOf(pid, process.pid), ticks: Number(fields[11]) + Number(fields[12]) });
    }
    return { at: Date.now(), machineBusy: total - idle, machineTotal: total, processes };
  } catch {
    return undefined;
  }
}

export function cpuBetween(before: CpuSample | undefined, after: CpuSample | undefined): CpuUse | undefined {
  if (!before || !after) return undefined;
  const seconds = (after.at - before.at) / 1000;
  const cores = (after.machineTotal - before.machineTotal) / TICKS_PER_SECOND / seconds;
  const machineBusyCores = (after.machineBusy - before.machineBusy) / TICKS_PER_SECOND / seconds;
  const byProcess: Record<string, number> = {};
  let ours = 0;
  for (const [pid, { name, ticks }] of after.processes) {
    const used = (ticks - (before.processes.get(pid)?.ticks ?? 0)) / TICKS_PER_SECOND / seconds;
    byProcess[name] = Math.round(((byProcess[name] ?? 0) + used) * 100) / 100;
    ours += used;
  }
  return {
    seconds: Math.round(seconds),
    cores: Math.round(cores * 10) / 10,
    machineBusyCores: Math.round(machineBusyCores * 100) / 100,
    byProcess,
    othersCores: Math.round(Math.max(0, machineBusyCores - ours) * 100) / 100,
  };
}
