import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/** The file that marks a folder in use (a run folder, an experiment folder). */
export const LOCK_FILE = '.lock';

/** A second writer on a folder that one process is already writing (`what` it is, which process holds it). */
export class FolderLockError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FolderLockError';
  }
}

/** A held lock; `release()` removes the lock file (idempotent; also done when the process exits). */
export interface FolderLock {
  readonly file: string;
  release(): void;
}

interface Holder {
  readonly pid: number;
  readonly token: string;
  readonly command: string;
  readonly since: string;
}

/** Whether a process with this pid runs on this machine (EPERM: it runs, as another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(file: string): Holder | undefined {
  try {
    const h = JSON.parse(readFileSync(file, 'utf8')) as Partial<Holder>;
    return typeof h.pid === 'number' && typeof h.token === 'string' ? (h as Holder) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the folder for this process: creates `<dir>/.lock` exclusively, holding the pid and command line. A lock
 * whose process no longer runs (a crash, a SIGKILL) is stale and taken over; one whose process runs — this one
 * included — is a FolderLockError naming the folder, the process and what to do. Two trainers or two experiment
 * runners writing one folder would interleave their logs and race their checkpoints; this refuses the second.
 *
 * The check is by pid, not by a refreshed timestamp: a training step can keep the event loop busy for longer than
 * any refresh interval, and the folders are local.
 */
export function lockFolder(dir: string, what: string): FolderLock {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, LOCK_FILE);
  const me: Holder = { pid: process.pid, token: randomBytes(8).toString('hex'), command: process.argv.slice(1).join(' '), since: new Date().toISOString() };
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      try {
        writeSync(fd, JSON.stringify(me) + '\n');
      } finally {
        closeSync(fd);
      }
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = readHolder(file);
      if (holder && alive(holder.pid)) {
        const who = holder.pid === process.pid ? 'this process' : `process ${holder.pid} (${holder.command})`;
        throw new FolderLockError(`${dir} is in use by ${who} since ${holder.since}: ${what} refuses to write it too; wait for that run to finish or stop it, or choose another --out. If no such process runs, delete ${file}.`);
      }
      if (attempt > 0) throw new FolderLockError(`${dir}: cannot take ${file} (another process keeps taking it); choose another --out.`);
      rmSync(file, { force: true }); // stale (or unreadable): its process is gone
    }
  }
  let held = true;
  const release = (): void => {
    if (!held) return;
    held = false;
    process.off('exit', release);
    if (readHolder(file)?.token === me.token) rmSync(file, { force: true });
  };
  process.on('exit', release);
  return { file, release };
}
