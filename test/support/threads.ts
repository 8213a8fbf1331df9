import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

// A process's threads as Linux shows them under /proc: each one's nice value (field 19 of its `stat`,
// counted after the parenthesised name, which may hold spaces).

/** The id of the thread that calls it (`/proc/thread-self` links to `<pid>/task/<id>`). */
export function ownThreadId(): number {
  return Number(readlinkSync('/proc/thread-self').split('/').pop());
}

/** The nice value of one thread of a process. */
export function threadNice(pid: number, threadId: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${threadId}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/** Every thread of a process, with its nice value. */
export function threadNices(pid: number): Map<number, number> {
  const nices = new Map<number, number>();
  for (const entry of readdirSync(`/proc/${pid}/task`)) {
    try {
      nices.set(Number(entry), threadNice(pid, Number(entry)));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return nices;
}
