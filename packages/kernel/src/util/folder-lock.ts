import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** Sleeps this thread (the lock is taken before any event loop work matters). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Error codes of file systems without hard links: creation falls back to an exclusive open. */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/**
 * Creates `file` holding `holder` only if it does not exist, with its whole content at once: written to a private
 * file first and hard-linked into place (an exclusive open would leave an empty file for a moment, which a second
 * process would read as an unreadable, stale lock and remove). False when it exists.
 */
function createExclusive(file: string, holder: Holder): boolean {
  const text = JSON.stringify(holder) + '\n';
  const tmp = `${file}.${holder.token}.tmp`;
  writeFileSync(tmp, text);
  try {
    linkSync(tmp, file);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (code === 'EEXIST') return false;
    if (!NO_LINKS.has(code)) throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
  try {
    writeFileSync(file, text, { flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function parseHolder(text: string | undefined): Holder | undefined {
  try {
    const h = JSON.parse(text ?? '') as Partial<Holder>;
    return typeof h.pid === 'number' && typeof h.token === 'string' ? (h as Holder) : undefined;
  } catch {
    return undefined;
  }
}

const readHolder = (file: string): Holder | undefined => parseHolder(readText(file));

/**
 * Removes the stale lock `file` if it still holds `staleText`, under `<file>.takeover` (created like a lock): two
 * processes that both found the stale lock would otherwise both remove it, the later one removing the lock the
 * earlier one had just taken. False when another process is taking over right now (try again).
 */
function removeStale(dir: string, file: string, staleText: string, me: Holder): boolean {
  const mutex = `${file}.takeover`;
  if (!createExclusive(mutex, me)) {
    const text = readText(mutex);
    if (text === undefined) return false; // the other process finished its takeover meanwhile: try again
    const other = parseHolder(text);
    if (other && alive(other.pid)) return false;
    throw new FolderLockError(
      `${dir}: ${mutex} was left by a process that stopped while taking over a stale lock; if no troupe process writes ${dir}, delete ${mutex} (and ${file}).`,
    );
  }
  try {
    if (readText(file) === staleText) rmSync(file, { force: true });
  } finally {
    rmSync(mutex, { force: true });
  }
  return true;
}

/** How often a lock that other processes keep changing is tried before giving up. */
const ATTEMPTS = 50;

/**
 * Takes the folder for this process: creates `<dir>/.lock` exclusively, holding the pid and command line. A lock
 * whose process no longer runs (a crash, a SIGKILL) is stale and taken over; one whose process runs — this one
 * included — is a FolderLockError naming the folder, the process and what to do. Two trainers or two experiment
 * runners writing one folder would interleave their logs and race their checkpoints; this refuses the second, also
 * when both start at the same instant (the lock file appears with its content at once, and a stale one is removed
 * by one process at a time, only while it still holds what was found stale).
 *
 * The check is by pid, not by a refreshed timestamp: a training step can keep the event loop busy for longer than
 * any refresh interval, and the folders are local.
 */
export function lockFolder(dir: string, what: string): FolderLock {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, LOCK_FILE);
  const me: Holder = {
    pid: process.pid,
    token: randomBytes(8).toString('hex'),
    command: process.argv.slice(1).join(' '),
    since: new Date().toISOString(),
  };
  for (let attempt = 0; !createExclusive(file, me); attempt++) {
    if (attempt >= ATTEMPTS)
      throw new FolderLockError(
        `${dir}: cannot take ${file} (other processes keep changing it); choose another --out.`,
      );
    const text = readText(file);
    if (text === undefined) continue; // released meanwhile: try again
    const holder = parseHolder(text);
    if (holder && alive(holder.pid)) {
      const who = holder.pid === process.pid ? 'this process' : `process ${holder.pid} (${holder.command})`;
      throw new FolderLockError(
        `${dir} is in use by ${who} since ${holder.since}: ${what} refuses to write it too; wait for that run to finish or stop it, or choose another --out. If no such process runs, delete ${file}.`,
      );
    }
    // stale (or unreadable: creation is atomic, so it was not being written): its process is gone
    if (!removeStale(dir, file, text, me)) sleepSync(10);
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
