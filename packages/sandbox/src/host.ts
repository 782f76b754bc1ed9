import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';

/** System directories mounted read-only (or recreated as the same symlink) in every isolated run. */
export const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'] as const;

/** Single files mounted read-only when present (the dynamic linker's cache; it reveals nothing secret). */
export const SYSTEM_FILES = ['/etc/ld.so.cache'] as const;

/** Where the run's temp dir appears inside the sandbox (its cwd and HOME). */
export const SANDBOX_DIR = '/sandbox';

/** True when this process runs as root (uid 0). */
export function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** Finds an executable by name in the system directories and PATH; undefined when absent. */
export function findTool(name: string): string | undefined {
  const dirs = ['/usr/bin', '/bin', '/usr/sbin', '/sbin', '/usr/local/bin', ...(process.env.PATH ?? '').split(':')];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  return undefined;
}

/** The Linux tools the sandbox drives, each resolved to an absolute path (or undefined when missing). */
export interface HostTools {
  /** bubblewrap. */
  bwrap?: string;
  /** util-linux unshare. */
  unshare?: string;
  /** util-linux prlimit (applies the rlimits, then execs the program). */
  prlimit?: string;
  /** util-linux setpriv (drops to a private uid and clears capabilities). */
  setpriv?: string;
  /** coreutils chroot (the unshare fallback). */
  chroot?: string;
  /** coreutils env (clears the environment and sets the cwd in the unshare fallback). */
  env?: string;
  /** A shell for the unshare fallback's mount script. */
  sh?: string;
  /** coreutils true (the isolation probe's program). */
  true?: string;
  /** coreutils cp (copies the request's files onto the sandbox's tmpfs). */
  cp?: string;
  /** util-linux mount (caps the inodes of bwrap's tmpfs when running as root). */
  mount?: string;
}

let toolsCache: HostTools | undefined;

/** Resolves the host tools once per process. */
export function hostTools(): HostTools {
  toolsCache ??= {
    bwrap: findTool('bwrap'),
    unshare: findTool('unshare'),
    prlimit: findTool('prlimit'),
    setpriv: findTool('setpriv'),
    chroot: findTool('chroot'),
    env: findTool('env'),
    sh: findTool('sh'),
    true: findTool('true'),
    cp: findTool('cp'),
    mount: findTool('mount'),
  };
  return toolsCache;
}

/** A language runtime resolved to a real executable and the directories it needs mounted. */
export interface RuntimeInfo {
  /** The real executable (symlinks and shims such as pyenv's resolved). */
  executable: string;
  /** Directories outside the system dirs that must be mounted read-only (the runtime's prefix). */
  mounts: string[];
  /** A directory put first on the sandbox's PATH (the runtime's bin dir). */
  binDir: string;
  /** Version string, for reports. */
  version: string;
}

/** Is `dir` equal to or inside one of the system directories? */
function underSystemDirs(dir: string): boolean {
  return SYSTEM_DIRS.some((s) => dir === s || dir.startsWith(`${s}/`));
}

/** Paths whose exposure inside the sandbox would leak the host's files (a runtime prefix must not contain them). */
function protectedPaths(): string[] {
  const out = new Set<string>(['/work', '/root', '/home', '/tmp', '/etc', '/var', homedir(), process.cwd(), tmpdir()]);
  return [...out].filter(Boolean).map((p) => path.resolve(p));
}

/**
 * Chooses the read-only mounts for a runtime's prefix directories: drops those under the system dirs and those
 * nested in another, and throws when one would expose a protected host directory (/, /work, /root, the home dir,
 * the cwd, the temp dir, or any ancestor of them).
 */
export function runtimeMounts(dirs: string[]): string[] {
  const real = new Set<string>();
  for (const d of dirs) {
    if (!d) continue;
    let r: string;
    try {
      r = realpathSync(d);
    } catch {
      continue;
    }
    if (underSystemDirs(r)) continue;
    real.add(r);
  }
  const sorted = [...real].sort((a, b) => a.length - b.length);
  const kept: string[] = [];
  for (const d of sorted) {
    if (kept.some((k) => d === k || d.startsWith(`${k}/`))) continue;
    const exposes = protectedPaths().find((p) => p === d || p.startsWith(d === '/' ? '/' : `${d}/`));
    if (d === '/' || exposes) {
      throw new Error(
        `the runtime directory ${d} would expose ${exposes ?? '/'} inside the sandbox; install the runtime under its own prefix (e.g. /usr or /opt/<name>)`,
      );
    }
    kept.push(d);
  }
  return kept;
}

/** Runs a command with the parent's environment and collects its stdout (for trusted probes only). */
export function capture(
  cmd: string,
  args: string[],
  timeoutMs = 15000,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let child;
    try {
      child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    } catch (err) {
      resolve({ code: null, stdout: '', stderr: String(err) });
      return;
    }
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', (err) => resolve({ code: null, stdout, stderr: stderr + String(err) }));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const PY_PROBE = [
  'import sys, os, json',
  'print(json.dumps({"executable": os.path.realpath(sys.executable), "prefixes": [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix], "version": sys.version.split()[0]}))',
].join('\n');

const runtimeCache = new Map<string, Promise<RuntimeInfo>>();

/**
 * Resolves the Python interpreter `command` (default `python3`, looked up on PATH, shims included) by asking it for
 * its real executable and its prefixes (sys.prefix, sys.base_prefix, ...). Cached per command.
 */
export function resolvePython(command = 'python3'): Promise<RuntimeInfo> {
  const key = `python:${command}`;
  let p = runtimeCache.get(key);
  if (!p) {
    p = (async () => {
      const r = await capture(command, ['-c', PY_PROBE]);
      if (r.code !== 0)
        throw new Error(
          `cannot run the Python interpreter "${command}": ${r.stderr.trim() || `exit code ${r.code}`}; install python3 or pass options.python`,
        );
      const info = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as {
        executable: string;
        prefixes: string[];
        version: string;
      };
      const exe = info.executable;
      const prefixDir = path.dirname(path.dirname(exe));
      return {
        executable: exe,
        mounts: runtimeMounts([...info.prefixes, prefixDir]),
        binDir: path.dirname(exe),
        version: `Python ${info.version}`,
      };
    })();
    p.catch(() => runtimeCache.delete(key));
    runtimeCache.set(key, p);
  }
  return p;
}

/** Resolves the Node.js executable (default: the one running this process) and its prefix directory. */
export function resolveNode(command?: string): Promise<RuntimeInfo> {
  const key = `node:${command ?? ''}`;
  let p = runtimeCache.get(key);
  if (!p) {
    p = (async () => {
      const given = command ?? process.execPath;
      const located = given.includes('/') ? given : findTool(given);
      if (!located || !existsSync(located))
        throw new Error(`cannot find the Node.js executable "${given}"; pass options.node`);
      const exe = realpathSync(located);
      const r = command ? await capture(exe, ['--version']) : { code: 0, stdout: process.version, stderr: '' };
      if (r.code !== 0) throw new Error(`cannot run the Node.js executable "${exe}": ${r.stderr.trim()}`);
      return {
        executable: exe,
        mounts: runtimeMounts([path.dirname(path.dirname(exe))]),
        binDir: path.dirname(exe),
        version: `Node ${r.stdout.trim()}`,
      };
    })();
    p.catch(() => runtimeCache.delete(key));
    runtimeCache.set(key, p);
  }
  return p;
}

/** One entry of the sandbox's root file system layout. */
export type LayoutEntry =
  | { kind: 'symlink'; path: string; target: string }
  | { kind: 'ro-dir'; path: string }
  | { kind: 'ro-file'; path: string };

/** The system part of the sandbox's file system: /usr and the /bin, /lib* dirs or symlinks, plus the linker cache. */
export function systemLayout(): LayoutEntry[] {
  const out: LayoutEntry[] = [];
  for (const dir of SYSTEM_DIRS) {
    let st;
    try {
      st = lstatSync(dir);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) out.push({ kind: 'symlink', path: dir, target: readlinkSync(dir) });
    else if (st.isDirectory()) out.push({ kind: 'ro-dir', path: dir });
  }
  for (const file of SYSTEM_FILES) if (existsSync(file)) out.push({ kind: 'ro-file', path: file });
  return out;
}

/** The ancestors of `p` (excluding '/' and `p` itself), outermost first: /a/b/c → [/a, /a/b]. */
export function ancestors(p: string): string[] {
  const parts = p.split('/').filter(Boolean);
  const out: string[] = [];
  for (let i = 1; i < parts.length; i++) out.push(`/${parts.slice(0, i).join('/')}`);
  return out;
}

/** True when any user can reach and execute `file` (every ancestor directory is world-searchable). */
export function worldReachable(file: string): boolean {
  try {
    for (const dir of ['/', ...ancestors(file)]) if ((statSync(dir).mode & 0o001) === 0) return false;
    return (statSync(file).mode & 0o001) !== 0;
  } catch {
    return false;
  }
}
