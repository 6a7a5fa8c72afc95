import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sharedEmulators } from './kit.js';
import { listeningSockets } from './listening-sockets.js';

/**
 * DynamoDB Local's JIT compilers give way to everything else on the machine: on 2 cores their
 * bursts held the emitter's timers back (emulators.ts). Read from the kernel's view of each
 * thread (Linux), so the test sees the priorities the JVM took, not the flags it was given.
 */

/** The process holding the socket that listens on `port` (its port is picked by the system, so not in its arguments). */
function processListeningOn(port: number): string {
  const inodes = new Set(listeningSockets(port).map(({ inode }) => `socket:[${inode}]`));
  const holders = readdirSync('/proc').filter((pid) => {
    if (!/^\d+$/.test(pid)) return false;
    try {
      return readdirSync(`/proc/${pid}/fd`).some((fd) => inodes.has(readlinkSync(`/proc/${pid}/fd/${fd}`)));
    } catch {
      return false; // gone since it was listed, or not this user's
    }
  });
  expect(holders, `the process listening on port ${port}`).toHaveLength(1);
  return holders[0] as string;
}

/** Each thread's name and nice value, from /proc/PID/task/TID/stat (the name may hold spaces). */
function threadNiceValues(pid: string): { name: string; nice: number }[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      // After the name: state is field 3, nice field 19.
      const nice = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
      return [{ name, nice }];
    } catch {
      return []; // the thread ended since it was listed
    }
  });
}

const emulators = sharedEmulators();

describe.runIf(process.platform === 'linux')('DynamoDB Local', () => {
  it('runs its JIT compilers at nice 19 and every other thread at 0', () => {
    const threads = threadNiceValues(processListeningOn(Number(new URL(emulators.dynamodbEndpoint).port)));
    const compilers = threads.filter(({ name }) => /^C[12] CompilerThre/.test(name));
    // One of each on 2 cores, more C2 threads on bigger machines.
    expect(new Set(compilers.map(({ name }) => name.slice(0, 2)))).toEqual(new Set(['C1', 'C2']));
    for (const { name, nice } of compilers) expect(nice, name).toBe(19);
    // The code cache sweeper is the compilers' own helper and takes their priority.
    const others = threads.filter(({ name }) => !/^C[12] CompilerThre|^Sweeper thread/.test(name));
    expect(others.length).toBeGreaterThan(10);
    for (const { name, nice } of others) expect(nice, name).toBe(0);
  });
});
