import { randomInt } from 'node:crypto';
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { InnerCommand, planFor } from './command.js';
import { execute } from './execute.js';
import { hostTools, isRoot, systemLayout } from './host.js';
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

/** Creates a run's temp dirs; `work` is owned by `uid` when given. */
export async function makeRunDirs(uid: number | undefined): Promise<RunDirs> {
  const base = await mkdtemp(path.join(tmpdir(), 'troupe-sbx-'));
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
  if (kind === 'bwrap') for (const t of ['bwrap', 'sh', 'cp', 'chown'] as const) if (!tools[t]) missing.push(t);
  if (kind === 'unshare') for (const t of ['unshare', 'chroot', 'env', 'sh', 'setpriv', 'cp', 'chown'] as const) if (!tools[t]) missing.push(t);
  if (!tools.prlimit) missing.push('prlimit');
  if (isRoot() && !tools.setpriv) missing.push('setpriv');
  if (!tools.true) missing.push('true');
  if (missing.length) return `missing ${missing.join(', ')}`;
  const uid = runUid();
  const dirs = await makeRunDirs(uid);
  try {
    const limits: SandboxLimits = { ...DEFAULT_LIMITS, wallMs: 10_000 };
    const inner: InnerCommand = { executable: tools.true!, args: [], env: { PATH: '/usr/bin:/bin' }, mounts: [], workDirBytes: 1 << 20 };
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
      return { kind: 'unavailable', details: `isolation needs Linux namespaces; this is ${process.platform}`, available: { bwrap: false, unshare: false } };
    }
    const [bwrapErr, unshareErr] = [await tryKind('bwrap'), await tryKind('unshare')];
    const available = { bwrap: bwrapErr === undefined, unshare: unshareErr === undefined };
    const who = isRoot() ? 'running as root: programs run as a private random uid (setpriv) so RLIMIT_NPROC applies' : 'running unprivileged: programs run in a user namespace';
    const notes = [
      `bwrap: ${available.bwrap ? 'works' : `unavailable (${bwrapErr}; install it with: apt-get install -y bubblewrap)`}`,
      `unshare: ${available.unshare ? 'works' : `unavailable (${unshareErr})`}`,
      who,
    ];
    const kind: IsolationReport['kind'] = available.bwrap ? 'bwrap' : available.unshare ? 'unshare' : 'unavailable';
    const head = kind === 'unavailable' ? 'no isolation available: runs are refused unless unisolated runs are allowed' : `isolation: ${kind}`;
    return { kind, details: `${head}; ${notes.join('; ')}`, available };
  })();
  return probeCache;
}

/** A few lines describing the sandbox on this machine, for `troupe doctor`. */
export async function describeIsolation(): Promise<string> {
  const r = await probeIsolation();
  const tools = hostTools();
  const lines = [`sandbox isolation: ${r.kind}`];
  lines.push(`  bwrap:   ${r.available.bwrap ? `ok (${tools.bwrap})` : tools.bwrap ? `found at ${tools.bwrap} but it does not work here` : 'not installed (apt-get install -y bubblewrap)'}`);
  lines.push(`  unshare: ${r.available.unshare ? `ok (${tools.unshare})` : tools.unshare ? `found at ${tools.unshare} but it does not work here` : 'not installed (util-linux)'}`);
  lines.push(`  limits via: prlimit ${tools.prlimit ? 'ok' : 'MISSING (util-linux)'}, setpriv ${tools.setpriv ? 'ok' : 'MISSING (util-linux)'}; ${isRoot() ? 'root: each run gets a private uid' : 'unprivileged: each run gets a user namespace'}`);
  if (r.kind === 'unavailable') lines.push('  runs are refused unless allowUnisolated / --allow-unisolated is given');
  return lines.join('\n');
}
