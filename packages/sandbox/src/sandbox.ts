import { chown, mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { classify } from './classify.js';
import { InnerCommand, planFor, STACK_BYTES } from './command.js';
import { execute } from './execute.js';
import {
  hostTools,
  isRoot,
  worldReachable,
  resolveNode,
  resolvePython,
  RuntimeInfo,
  SANDBOX_DIR,
  systemLayout,
} from './host.js';
import { TaskPool } from './pool.js';
import { makeRunDirs, probeIsolation, removeRunDirs, RunDirs, runUid } from './probe.js';
import {
  DEFAULT_LIMITS,
  IsolationKind,
  MAX_LIMIT,
  IsolationReport,
  Language,
  RunRequest,
  RunResult,
  SandboxLimits,
  SandboxOptions,
} from './types.js';

const LIMIT_KEYS = Object.keys(DEFAULT_LIMITS) as (keyof SandboxLimits)[];

/** Checks a partial limits object; returns an error message naming the key, or undefined. */
function checkLimits(where: string, limits: Partial<SandboxLimits> | undefined): string | undefined {
  if (limits === undefined) return undefined;
  if (typeof limits !== 'object' || limits === null) return `${where} must be an object`;
  for (const [k, v] of Object.entries(limits)) {
    if (!LIMIT_KEYS.includes(k as keyof SandboxLimits))
      return `${where}.${k} is not a known limit (known: ${LIMIT_KEYS.join(', ')})`;
    if (v === undefined) continue;
    const bad = badLimitValue(v);
    if (bad) return `${where}.${k} ${bad}`;
  }
  return undefined;
}

/** Why `v` is not a valid limit value (an integer from 1 to {@link MAX_LIMIT}), or undefined when it is one. */
export function badLimitValue(v: unknown): string | undefined {
  if (typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= MAX_LIMIT) return undefined;
  return `must be a positive integer no larger than ${MAX_LIMIT} (2^31 - 1), got ${typeof v === 'number' ? String(v) : JSON.stringify(v)}`;
}

/** Drops undefined values so that `{ ...a, ...b }` does not erase a's keys. */
function defined<T extends object>(o: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Checks a file name given in `files`: relative, inside the work dir, no `..`. */
function checkFileName(name: string): string | undefined {
  if (
    !name ||
    path.isAbsolute(name) ||
    name.split(/[\\/]/).some((p) => p === '..' || p === '') ||
    name.includes('\0')
  ) {
    return `files: "${name}" must be a relative path inside the working directory (no "..", no leading "/")`;
  }
  return undefined;
}

/** The smallest limits Node.js starts under (measured: 4 threads make pthread_create fail, 16 MiB hangs V8). */
export const JS_MIN = { maxProcesses: 6, memoryMb: 32 } as const;

const MAIN_FILE: Record<Language, string> = { python: 'main.py', javascript: 'main.js' };

/**
 * Capacity of the tmpfs holding the program's working directory: the request's files plus room for 16 files of
 * `maxFileBytes` (at least 16 MiB). Writing more fails with ENOSPC; the host's disk is never touched.
 */
export function workDirCapacity(req: Pick<RunRequest, 'source' | 'files'>, limits: SandboxLimits): number {
  const inputs =
    Buffer.byteLength(req.source) +
    Object.values(req.files ?? {}).reduce((n, c) => n + Buffer.byteLength(c) + 4096, 4096);
  return inputs + Math.max(16 << 20, 16 * limits.maxFileBytes);
}

/** Files and directories the working directory may hold besides the request's own (its tmpfs's inode cap). */
export const WORK_DIR_INODES = 4096;

/**
 * Address space (MiB) each process gets besides `memoryMb`: the runtime's own mappings (V8 reserves about 700 MiB of
 * address space it never touches: its code range alone is 512 MiB; Python maps about 20 MiB of libraries).
 */
export const RUNTIME_ADDRESS_SPACE_MB: Readonly<Record<Language, number>> = Object.freeze({
  python: 64,
  javascript: 1024,
});

/**
 * RLIMIT_AS of each process of a run: `memoryMb`, the runtime's allowance, and one reserved stack per thread it may
 * start. It is what counts shared memory (`mmap(MAP_SHARED)`, memfd mappings), which RLIMIT_DATA does not.
 */
export function addressSpaceBytes(language: Language, limits: SandboxLimits): number {
  const stacksMb = limits.maxProcesses * ((STACK_BYTES >> 20) + 1);
  return (limits.memoryMb + RUNTIME_ADDRESS_SPACE_MB[language] + stacksMb) * 1024 * 1024;
}

/** What an unisolated run can do, said plainly (`dropped`: it runs as a private uid, dropped from root). */
export function unisolatedWarning(dropped: boolean): string {
  const who = dropped
    ? 'as a private unprivileged uid each (dropped from root)'
    : `as this process's own user (uid ${process.getuid?.() ?? '?'})`;
  return `UNISOLATED sandbox runs (allowUnisolated / --allow-unisolated): programs run ${who} with only rlimits and an empty environment; they CAN read every file that user can read, reach the network, and leave processes behind. Use bwrap (apt-get install -y bubblewrap) for untrusted code.`;
}

/**
 * Decides which isolation a sandbox with `options` uses on a machine described by `report`: the forced kind when it
 * works, else the best available, else 'none' only when `allowUnisolated`; otherwise a refusal saying what to do.
 */
export function chooseIsolation(
  report: IsolationReport,
  options: Pick<SandboxOptions, 'isolation' | 'allowUnisolated'>,
  hasPrlimit: boolean,
): { kind?: IsolationKind; refusal?: string } {
  const wanted = options.isolation ?? 'auto';
  if (wanted === 'none' || (wanted === 'auto' && report.kind === 'unavailable')) {
    if (!options.allowUnisolated) {
      return wanted === 'none'
        ? { refusal: 'isolation "none" needs allowUnisolated: true (runs would NOT be isolated)' }
        : {
            refusal: `no isolation is available (${report.details}); install bubblewrap (apt-get install -y bubblewrap) or allow unisolated runs`,
          };
    }
    if (!hasPrlimit) return { refusal: 'cannot apply resource limits: prlimit (util-linux) is missing' };
    if (isRoot() && !hostTools().setpriv)
      return { refusal: 'cannot drop root privileges for unisolated runs: setpriv (util-linux) is missing' };
    return { kind: 'none' };
  }
  if (wanted === 'auto') return { kind: report.kind as IsolationKind };
  if (report.available[wanted]) return { kind: wanted };
  return { refusal: `isolation "${wanted}" was requested but does not work here (${report.details})` };
}

/**
 * Runs untrusted Python and JavaScript programs in isolation (see the package README for the exact guarantees).
 *
 * `run` never rejects: every problem becomes a {@link RunResult} (verdict 'refused' with a reason when the program
 * was not run). Runs go through a FIFO pool of `concurrency` slots; each run gets its own temp dir, always removed.
 */
export class Sandbox {
  private readonly options: SandboxOptions;
  private readonly pool: TaskPool;
  private readonly slots: TaskPool | undefined;
  private readonly inFlight = new Set<AbortController>();
  private readonly runs = new Set<Promise<RunResult>>();
  private closed = false;
  private kindPromise: Promise<{ kind?: IsolationKind; refusal?: string }> | undefined;

  /** @param options isolation choice, pool size, default limits and runtimes; see {@link SandboxOptions}. */
  constructor(options: SandboxOptions = {}) {
    this.options = { ...options };
    const concurrency = options.concurrency ?? options.slots?.concurrency ?? Math.max(1, availableParallelism());
    this.pool = new TaskPool(concurrency);
    this.slots = options.slots;
    const bad = checkLimits('options.defaults', options.defaults);
    if (bad) throw new RangeError(`Sandbox: ${bad}`);
    const iso = options.isolation ?? 'auto';
    if (!['auto', 'bwrap', 'unshare', 'none'].includes(iso))
      throw new RangeError(
        `Sandbox: options.isolation must be auto, bwrap, unshare or none, got ${JSON.stringify(iso)}`,
      );
  }

  /** The limits a request gets: DEFAULT_LIMITS, then the sandbox's defaults, then the request's own. */
  limitsFor(req?: Pick<RunRequest, 'limits'>): SandboxLimits {
    return { ...DEFAULT_LIMITS, ...defined(this.options.defaults), ...defined(req?.limits) };
  }

  /** Chooses the isolation kind once: forced, or the best available, or 'none' when allowed; else a refusal. */
  private chooseKind(): Promise<{ kind?: IsolationKind; refusal?: string }> {
    this.kindPromise ??= probeIsolation().then((report) =>
      chooseIsolation(report, this.options, Boolean(hostTools().prlimit)),
    );
    return this.kindPromise;
  }

  /** What isolation this sandbox's runs get (the machine's report, with `kind` as chosen by this sandbox's options). */
  async isolation(): Promise<IsolationReport> {
    const report = await probeIsolation();
    const choice = await this.chooseKind();
    if (choice.kind) {
      const details =
        choice.kind === 'none' ? `runs are NOT isolated (unisolated runs allowed); ${report.details}` : report.details;
      return { ...report, kind: choice.kind, details };
    }
    return { ...report, kind: 'unavailable', details: choice.refusal ?? report.details };
  }

  /** Runs one program; never rejects. */
  run(req: RunRequest): Promise<RunResult> {
    const p = this.runInner(req);
    this.runs.add(p);
    void p.finally(() => this.runs.delete(p));
    return p;
  }

  /** Runs many programs through the pool; results in request order. */
  runMany(reqs: RunRequest[]): Promise<RunResult[]> {
    return Promise.all(reqs.map((r) => this.run(r)));
  }

  /** Refuses new runs, kills the running ones and waits until every temp dir is removed. */
  async close(): Promise<void> {
    this.closed = true;
    for (const c of this.inFlight) c.abort();
    await Promise.allSettled([...this.runs]);
  }

  private warnedUnisolated = false;

  /** The loud warning of an unisolated sandbox: on stderr, at its first run. */
  private warnUnisolated(uid: number | undefined): void {
    if (this.warnedUnisolated) return;
    this.warnedUnisolated = true;
    process.emitWarning(unisolatedWarning(uid !== undefined), {
      type: 'TroupeSandboxWarning',
      code: 'TROUPE_SANDBOX_UNISOLATED',
    });
  }

  private refused(reason: string, isolation: IsolationKind = 'none'): RunResult {
    return {
      verdict: 'refused',
      exitCode: null,
      signal: null,
      stdout: '',
      stderr: '',
      wallMs: 0,
      truncated: false,
      isolation,
      reason,
    };
  }

  private validate(req: RunRequest): string | undefined {
    if (!req || typeof req !== 'object') return 'the request must be an object';
    if (req.language !== 'python' && req.language !== 'javascript')
      return `language must be "python" or "javascript", got ${JSON.stringify(req.language)}`;
    if (typeof req.source !== 'string') return 'source must be a string';
    if (req.stdin !== undefined && typeof req.stdin !== 'string') return 'stdin must be a string';
    if (
      req.args !== undefined &&
      (!Array.isArray(req.args) || req.args.some((a) => typeof a !== 'string' || a.includes('\0')))
    )
      return 'args must be an array of strings';
    const bad = checkLimits('limits', req.limits);
    if (bad) return bad;
    for (const [name, content] of Object.entries(req.files ?? {})) {
      const e = checkFileName(name);
      if (e) return e;
      if (name === MAIN_FILE[req.language]) return `files: "${name}" would overwrite the program itself`;
      if (typeof content !== 'string') return `files: "${name}" must map to a string`;
    }
    return undefined;
  }

  private async runInner(req: RunRequest): Promise<RunResult> {
    const invalid = this.validate(req);
    if (invalid) return this.refused(`invalid request: ${invalid}`);
    if (this.closed) return this.refused('the sandbox is closed');
    return this.pool.run(() => (this.slots ? this.slots.run(() => this.execute(req)) : this.execute(req)));
  }

  /** Runs a validated request once it holds a slot. */
  private async execute(req: RunRequest): Promise<RunResult> {
    if (this.closed) return this.refused('the sandbox is closed');
    if (req.signal?.aborted) return this.refused("aborted by the caller's AbortSignal before it started");
    const choice = await this.chooseKind();
    if (!choice.kind) return this.refused(choice.refusal ?? 'no isolation');
    const kind = choice.kind;
    let runtime: RuntimeInfo;
    try {
      runtime =
        req.language === 'python' ? await resolvePython(this.options.python) : await resolveNode(this.options.node);
    } catch (err) {
      return this.refused((err as Error).message, kind);
    }
    const limits = this.limitsFor(req);
    if (
      req.language === 'javascript' &&
      (limits.maxProcesses < JS_MIN.maxProcesses || limits.memoryMb < JS_MIN.memoryMb)
    ) {
      // Node hangs (rather than failing) when it cannot start its threads or map its heap.
      return this.refused(
        `JavaScript needs maxProcesses >= ${JS_MIN.maxProcesses} (Node's own threads count) and memoryMb >= ${JS_MIN.memoryMb}; got ${limits.maxProcesses} and ${limits.memoryMb}`,
        kind,
      );
    }
    // As root, every run (unisolated ones too) executes as a private unprivileged uid: a runtime that uid cannot
    // reach on the host's disk (a pyenv Python under /root) cannot run unisolated.
    const uid = runUid();
    if (kind === 'none') {
      if (uid !== undefined && !worldReachable(runtime.executable)) {
        return this.refused(
          `an unisolated run as root drops to an unprivileged uid, which cannot reach ${runtime.executable} (a parent directory is not searchable by others); install the runtime under /usr or /opt, or use bwrap (apt-get install -y bubblewrap)`,
          kind,
        );
      }
      this.warnUnisolated(uid);
    }
    let dirs: RunDirs | undefined;
    const ctl = new AbortController();
    this.inFlight.add(ctl);
    try {
      dirs = await makeRunDirs(uid);
      await this.writeFiles(dirs.work, req, uid);
      const inner = this.innerCommand(req, runtime, limits, kind === 'none' ? dirs.work : SANDBOX_DIR);
      const plan = planFor(kind, hostTools(), systemLayout(), inner, dirs.work, dirs.root, limits, uid);
      const signal = req.signal ? AbortSignal.any([req.signal, ctl.signal]) : ctl.signal;
      const raw = await execute(plan, {
        stdin: req.stdin ?? '',
        wallMs: limits.wallMs,
        maxOutputBytes: limits.maxOutputBytes,
        signal,
      });
      const result = classify(raw, kind, limits);
      if (raw.aborted && ctl.signal.aborted && !req.signal?.aborted)
        result.reason = 'the sandbox was closed during the run';
      return result;
    } catch (err) {
      return this.refused(`could not prepare the run: ${(err as Error).message}`, kind);
    } finally {
      this.inFlight.delete(ctl);
      if (dirs) await removeRunDirs(dirs);
    }
  }

  private async writeFiles(work: string, req: RunRequest, uid: number | undefined): Promise<void> {
    const all: [string, string][] = [[MAIN_FILE[req.language], req.source], ...Object.entries(req.files ?? {})];
    for (const [name, content] of all) {
      const target = path.join(work, name);
      const parts = name.split('/').slice(0, -1);
      let dir = work;
      for (const part of parts) {
        dir = path.join(dir, part);
        await mkdir(dir, { recursive: true });
        if (uid !== undefined) await chown(dir, uid, uid);
      }
      await writeFile(target, content);
      if (uid !== undefined) await chown(target, uid, uid);
    }
  }

  private innerCommand(req: RunRequest, runtime: RuntimeInfo, limits: SandboxLimits, home: string): InnerCommand {
    const env: Record<string, string> = {
      PATH: `${runtime.binDir}:/usr/local/bin:/usr/bin:/bin`,
      HOME: home,
      TMPDIR: home,
      LANG: 'C.UTF-8',
    };
    const args = req.args ?? [];
    const workDirBytes = workDirCapacity(req, limits);
    const sizes = {
      workDirBytes,
      workDirInodes: WORK_DIR_INODES + 2 * Object.keys(req.files ?? {}).length + 2,
      addressSpaceBytes: addressSpaceBytes(req.language, limits),
    };
    if (req.language === 'python') {
      // The environment is already ours alone, so no -E: PYTHONHASHSEED=0 makes set/dict-of-str order reproducible.
      env.PYTHONHASHSEED = '0';
      return {
        executable: runtime.executable,
        args: ['-s', '-B', MAIN_FILE.python, ...args],
        env,
        mounts: runtime.mounts,
        ...sizes,
      };
    }
    env.UV_THREADPOOL_SIZE = '2';
    const heap = Math.max(8, Math.floor(limits.memoryMb * 0.75));
    return {
      executable: runtime.executable,
      args: [`--max-old-space-size=${heap}`, '--v8-pool-size=2', '--', MAIN_FILE.javascript, ...args],
      env,
      mounts: runtime.mounts,
      ...sizes,
    };
  }
}
