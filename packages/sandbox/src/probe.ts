import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, chown, lstat, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { InnerCommand, planFor } from './command.js';
import { execute } from './execute.js';
import { hostTools, isRoot, systemLayout } from './host.js';
import { noUserNamespacesFilter } from './seccomp.js';
import type { IsolationKind, IsolationReport, SandboxLimits } from './types.js';
import { DEFAULT_LIMITS } from './types.js';

/** A run's private host directories: `base` (removed afterwards), `work` (the program's cwd), `root` (mountpoint). */
export interface RunDirs {
  /** The temp dir holding everything of this run; removed when the run ends. */
  base: string;
  /** The program's working directory (mounted at /sandbox). */
  work: string;
  /** An empty directory the unshare fallback mounts its tmpfs root on. */
  root: string;
}

/** A fresh uid for one run when running as root (RLIMIT_NPROC never applies to uid 0), else undefined. */
export function runUid(): number | undefined {
  return isRoot() ? randomInt(10_000_000, 2_000_000_000) : undefined;
}

/** The start time of process `pid` (clock ticks since boot, /proc/PID/stat field 22), or undefined when it is gone. */
export function processStart(pid: number | 'self'): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Run dirs are named after the process that made them: `troupe-sbx-<pid>-<start time>-XXXXXX`. */
const RUN_DIR = /^troupe-sbx-(\d+)-(\d+)-[A-Za-z0-9]{6}$/;

/**
 * Removes the run dirs under `dir` left by processes that are gone (a host killed with SIGKILL cannot clean up):
 * those named after a pid that no longer runs, or that now belongs to a process started at another time. Only
 * directories owned by this process's uid are touched. Returns the names removed.
 */
export async function removeStaleRunDirs(dir: string = tmpdir()): Promise<string[]> {
  const removed: string[] = [];
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return removed;
  }
  for (const name of names) {
    const m = RUN_DIR.exec(name);
    if (!m || processStart(Number(m[1])) === m[2]) continue;
    const full = path.join(dir, name);
    try {
      const st = await lstat(full);
      if (!st.isDirectory() || st.uid !== process.getuid?.()) continue;
      await rm(full, { recursive: true, force: true, maxRetries: 3 });
      removed.push(name);
    } catch {
      // another process got there first, or it cannot be removed: leave it
    }
  }
  return removed;
}

let staleSweep: Promise<unknown> | undefined;

/** Creates a run's temp dirs; `work` is owned by `uid` when given. The first call sweeps stale ones of dead processes. */
export async function makeRunDirs(uid: number | undefined): Promise<RunDirs> {
  await (staleSweep ??= removeStaleRunDirs());
  const base = await mkdtemp(path.join(tmpdir(), `troupe-sbx-${process.pid}-${processStart('self') ?? 0}-`));
  await chmod(base, 0o711);
  const work = path.join(base, 'work');
  const root = path.join(base, 'root');
  await mkdir(work, { mode: 0o700 });
  await mkdir(root, { mode: 0o700 });
  if (uid !== undefined) await chown(work, uid, uid);
  return { base, work, root };
}

/** Removes a run's temp dirs (never throws). */
export async function removeRunDirs(dirs: RunDirs): Promise<void> {
  await rm(dirs.base, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
}

/** Runs `true` under one isolation kind; resolves with an error message, or undefined when it works. */
async function tryKind(kind: IsolationKind): Promise<string | undefined> {
  const tools = hostTools();
  const missing: string[] = [];
  if (kind === 'bwrap')
    for (const t of ['bwrap', 'sh', 'cp', ...(isRoot() ? (['mount'] as const) : [])] as const)
      if (!tools[t]) missing.push(t);
  if (kind === 'unshare')
    for (const t of ['unshare', 'chroot', 'env', 'sh', 'setpriv', 'cp'] as const) if (!tools[t]) missing.push(t);
  if (!tools.prlimit) missing.push('prlimit');
  if (isRoot() && !tools.setpriv) missing.push('setpriv');
  if (!tools.true) missing.push('true');
  if (missing.length) return `missing ${missing.join(', ')}`;
  const uid = runUid();
  const dirs = await makeRunDirs(uid);
  try {
    const limits: SandboxLimits = { ...DEFAULT_LIMITS, wallMs: 10_000 };
    const inner: InnerCommand = {
      executable: tools.true!,
      args: [],
      env: { PATH: '/usr/bin:/bin' },
      mounts: [],
      workDirBytes: 1 << 20,
      workDirInodes: 64,
      addressSpaceBytes: 256 << 20,
    };
    const plan = planFor(kind, tools, systemLayout(), inner, dirs.work, dirs.root, limits, uid);
    const raw = await execute(plan, { stdin: '', wallMs: limits.wallMs, maxOutputBytes: 64 * 1024 });
    if (raw.spawnError) return raw.spawnError;
    if (raw.exitCode !== 0) {
      const why = raw.stderr.toString('utf8').trim().split('\n').slice(-2).join(' ');
      return `${path.basename(plan.command)} failed (${raw.signal ?? `exit ${raw.exitCode}`})${why ? `: ${why}` : ''}`;
    }
    return undefined;
  } finally {
    await removeRunDirs(dirs);
  }
}

let probeCache: Promise<IsolationReport> | undefined;

/**
 * Finds which isolation works on this machine by actually running a trivial program under bubblewrap and under the
 * unshare fallback (cached per process). `kind` is the best one that works, or 'unavailable'.
 */
export function probeIsolation(): Promise<IsolationReport> {
  probeCache ??= (async (): Promise<IsolationReport> => {
    if (process.platform !== 'linux') {
      return {
        kind: 'unavailable',
        details: `isolation needs Linux namespaces; this is ${process.platform}`,
        available: { bwrap: false, unshare: false },
      };
    }
    const [bwrapErr, unshareErr] = [await tryKind('bwrap'), await tryKind('unshare')];
    const available = { bwrap: bwrapErr === undefined, unshare: unshareErr === undefined };
    const who = isRoot()
      ? 'running as root: every program runs as a private random uid (setpriv), so RLIMIT_NPROC applies'
      : 'running unprivileged: isolated programs run in a user namespace, unisolated ones as this user';
    const notes = [
      `bwrap: ${available.bwrap ? 'works' : `unavailable (${bwrapErr}; install it with: apt-get install -y bubblewrap)`}`,
      `unshare: ${available.unshare ? 'works' : `unavailable (${unshareErr})`}`,
      who,
    ];
    const kind: IsolationReport['kind'] = available.bwrap ? 'bwrap' : available.unshare ? 'unshare' : 'unavailable';
    const head =
      kind === 'unavailable'
        ? 'no isolation available: runs are refused unless unisolated runs are allowed'
        : `isolation: ${kind}`;
    return { kind, details: `${head}; ${notes.join('; ')}`, available };
  })();
  return probeCache;
}

/**
 * What holds for programs run under `kind` on this machine, one plain statement each (for `troupe doctor` and the
 * docs): what the isolation guarantees, and what it does not.
 */
export function isolationGuarantees(kind: IsolationKind): string[] {
  const root = isRoot();
  const common = [
    'resource limits: CPU time, memory (RLIMIT_DATA and RLIMIT_AS per process: shared memory counts), processes and threads, file size, 256 open files',
    'descriptors the host process holds open (without close-on-exec) are replaced by /dev/null: none reaches the program',
    'an empty environment (PATH, HOME, TMPDIR, LANG only)',
  ];
  if (kind === 'none') {
    return [
      root
        ? 'runs as a private unprivileged uid (dropped from root; a runtime that uid cannot reach is refused)'
        : `runs as this user (uid ${process.getuid?.()}): NOT dropped`,
      'NOT isolated: the program can read every file its uid can read, reach the network, and leave processes behind',
      ...common,
    ];
  }
  const userns =
    kind === 'unshare'
      ? 'no user namespaces: the kernel refuses them to chrooted programs'
      : !root
        ? 'no user namespaces (bwrap --disable-userns)'
        : noUserNamespacesFilter()
          ? 'no user namespaces (a seccomp filter refuses CLONE_NEWUSER)'
          : `user namespaces NOT blocked: no seccomp filter for ${process.arch}`;
  return [
    'no network: a new network namespace with loopback only',
    'files: /usr, /bin, /sbin, /lib* and the runtime prefix read-only; writable only its own tmpfs (/sandbox, /dev/shm)',
    kind === 'bwrap' && !root
      ? 'the tmpfs are capped in size; their file count only by the wall time (unprivileged bwrap cannot remount)'
      : 'the tmpfs are capped in size and in file count',
    root
      ? 'runs as a private random uid per run, with no capabilities and no_new_privs'
      : 'runs in a user namespace, with no capabilities and no_new_privs',
    userns,
    'no survivors: a new PID namespace, killed as a whole when the run ends',
    ...common,
  ];
}

/** A few lines describing the sandbox on this machine, for `troupe doctor`. */
export async function describeIsolation(): Promise<string> {
  const r = await probeIsolation();
  const tools = hostTools();
  const lines = [`sandbox isolation: ${r.kind}`];
  lines.push(
    `  bwrap:   ${r.available.bwrap ? `ok (${tools.bwrap})` : tools.bwrap ? `found at ${tools.bwrap} but it does not work here` : 'not installed (apt-get install -y bubblewrap)'}`,
  );
  lines.push(
    `  unshare: ${r.available.unshare ? `ok (${tools.unshare})` : tools.unshare ? `found at ${tools.unshare} but it does not work here` : 'not installed (util-linux)'}`,
  );
  lines.push(
    `  limits via: prlimit ${tools.prlimit ? 'ok' : 'MISSING (util-linux)'}, setpriv ${tools.setpriv ? 'ok' : 'MISSING (util-linux)'}`,
  );
  if (r.kind === 'unavailable') {
    lines.push('  runs are refused unless allowUnisolated / --allow-unisolated is given; then:');
    for (const h of isolationGuarantees('none')) lines.push(`    - ${h}`);
  } else {
    lines.push(`  what holds under ${r.kind}:`);
    for (const h of isolationGuarantees(r.kind)) lines.push(`    - ${h}`);
    lines.push('  with isolation "none" (allowUnisolated / --allow-unisolated), only:');
    for (const h of isolationGuarantees('none')) lines.push(`    - ${h}`);
  }
  return lines.join('\n');
}
