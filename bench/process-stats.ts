// What a process costs, read from /proc (Linux): CPU time and resident memory; and pinning processes
// to cores with taskset, so that servers and the load generator do not take each other's CPU.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** CPU time (user and system) the process has used so far, in ms. */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of the line; the split leaves them at 11 and 12.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/**
 * CPU time used so far by a process's children (PostgreSQL's backends, for the postmaster), in ms:
 * the live ones' own, and the parent's count of the children it has reaped. Without the second, a
 * backend that exited during a measurement took its CPU time out of the total, and the difference of
 * two readings came out negative.
 */
export function childrenCpuMs(parentPid: number): number {
  // cutime and cstime, fields 16 and 17 of the line (13 and 14 after the split): reaped children's.
  const parent = readFileSync(`/proc/${parentPid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  let total = ((Number(parent[13]) + Number(parent[14])) * 1000) / TICKS_PER_SECOND;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // Gone meanwhile.
    }
    const fields = stat.split(') ')[1]!.split(' ');
    // ppid is field 4 of the line (1 after the split); utime and stime 14 and 15.
    if (Number(fields[1]) === parentPid) total += ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  }
  return total;
}

/** Resident memory of the process now, in MB. */
export function rssMb(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

/** Samples a process's resident memory until stopped; returns the highest seen. */
export function watchRss(pid: number, everyMs = 100): { stop(): number } {
  let peak = rssMb(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssMb(pid))), everyMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, rssMb(pid));
    },
  };
}

export const CAN_PIN =
  process.platform === 'linux' && existsSync('/usr/bin/taskset') && (spawnSync('nproc').stdout?.toString().trim() ?? '1') !== '1';

/** Pins a running process and all its threads to one core (children it forks later inherit it). */
export function pin(pid: number, core: number): void {
  if (!CAN_PIN) return;
  const result = spawnSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`taskset failed: ${result.stderr}`);
}

/** The command and arguments that run `command` pinned to `core` (unchanged when pinning is not possible). */
export function pinned(core: number, command: string, args: string[]): [string, string[]] {
  return CAN_PIN ? ['taskset', ['-c', String(core), command, ...args]] : [command, args];
}
