import type { TaskPool } from './pool.js';

/** The languages the sandbox runs: the machine's `python3`, or Node.js for JavaScript. */
export type Language = 'python' | 'javascript';

/**
 * Resource limits of one run. Every field is an integer from 1 to {@link MAX_LIMIT}.
 *
 * Mechanisms: `cpuMs` → RLIMIT_CPU (whole seconds, rounded up; SIGXCPU then SIGKILL one second later),
 * `wallMs` → a host timer that kills the whole sandbox, `memoryMb` → RLIMIT_DATA (heap and private writable mappings;
 * for JavaScript also `--max-old-space-size`) and RLIMIT_AS (every mapping, shared memory included, plus a fixed
 * allowance for the runtime's reservations and thread stacks), `maxProcesses` → RLIMIT_NPROC (counts THREADS too)
 * applied to a private uid or user namespace, `maxOutputBytes` → the host stops reading and kills the run,
 * `maxFileBytes` → RLIMIT_FSIZE.
 */
export interface SandboxLimits {
  /** CPU time per process in milliseconds (rounded up to whole seconds by the kernel's RLIMIT_CPU). */
  cpuMs: number;
  /** Wall-clock time of the whole run in milliseconds. */
  wallMs: number;
  /** Memory (data segment and private writable mappings) per process, in MiB. */
  memoryMb: number;
  /** Processes and threads the program may have at once (RLIMIT_NPROC). */
  maxProcesses: number;
  /** Bytes kept of stdout, and separately of stderr; more kills the run with verdict 'output-limit'. */
  maxOutputBytes: number;
  /** Largest file the program may write (RLIMIT_FSIZE), in bytes. */
  maxFileBytes: number;
}

/** The largest value of any limit: 2^31 − 1 (a longer timer would fire at once; bigger sizes mean nothing here). */
export const MAX_LIMIT = 2 ** 31 - 1;

/** Limits used when neither the sandbox options nor the request say otherwise. */
export const DEFAULT_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  cpuMs: 2000,
  wallMs: 5000,
  memoryMb: 256,
  maxProcesses: 16,
  maxOutputBytes: 1 << 20,
  maxFileBytes: 1 << 20,
});

/**
 * How a run ended.
 * - `ok`: exit code 0 (stderr output alone never makes a run fail).
 * - `runtime-error`: non-zero exit code or killed by a signal not covered below.
 * - `timeout`: the wall-time or CPU-time limit was hit.
 * - `memory-limit`: the program ran out of memory (MemoryError, V8 heap limit, ENOMEM, a failed mmap).
 * - `output-limit`: stdout or stderr exceeded `maxOutputBytes`; the output kept is truncated.
 * - `refused`: the program was not run (no isolation available, invalid request, sandbox closed); see `reason`.
 */
export type Verdict = 'ok' | 'runtime-error' | 'timeout' | 'memory-limit' | 'output-limit' | 'refused';

/** One program to run. */
export interface RunRequest {
  /** Language of `source`. */
  language: Language;
  /** The program text; written to `main.py` or `main.js` in the run's fresh working directory. */
  source: string;
  /** Text fed to the program's stdin (then closed). Empty when absent. */
  stdin?: string;
  /** Per-run overrides of the sandbox's limits. */
  limits?: Partial<SandboxLimits>;
  /** Extra files written to the working directory before the run: relative path → content. */
  files?: Record<string, string>;
  /** Command-line arguments passed to the program. */
  args?: string[];
  /** Aborting kills the run (verdict 'runtime-error', reason says aborted) or drops it from the queue ('refused'). */
  signal?: AbortSignal;
}

/** What happened when a program ran. */
export interface RunResult {
  /** The classification of the run. */
  verdict: Verdict;
  /** The program's exit code; null when it was killed by a signal or never ran. */
  exitCode: number | null;
  /** The signal that killed the program (e.g. 'SIGKILL', 'SIGXCPU'), or null. */
  signal: string | null;
  /** Standard output (UTF-8), at most `maxOutputBytes` bytes. */
  stdout: string;
  /** Standard error (UTF-8), at most `maxOutputBytes` bytes. */
  stderr: string;
  /** Wall-clock duration of the run in milliseconds (0 when refused). */
  wallMs: number;
  /** True when stdout or stderr was cut at `maxOutputBytes`. */
  truncated: boolean;
  /** The isolation the run used (for a refused run: the kind it would have used, or 'none' when that was not decided). */
  isolation: IsolationKind;
  /** Why the verdict is what it is, when that is not obvious (always set for 'refused', 'timeout', limits). */
  reason?: string;
}

/**
 * How runs are isolated.
 * - `bwrap`: bubblewrap: new mount, PID, network, IPC and UTS namespaces; only the runtime's directories mounted
 *   read-only and the run's temp dir writable.
 * - `unshare`: util-linux `unshare` + `chroot` with the same mount layout (fallback when bwrap is missing).
 * - `none`: a plain child process with rlimits, an empty environment and a temp cwd: NOT isolated.
 */
export type IsolationKind = 'bwrap' | 'unshare' | 'none';

/** What isolation this machine offers. */
export interface IsolationReport {
  /** The isolation runs will use, or 'unavailable' when none works (runs are then refused unless unisolated is allowed). */
  kind: IsolationKind | 'unavailable';
  /** A human-readable explanation: what was found, what was chosen, and what to install if missing. */
  details: string;
  /** Which mechanisms actually work here (probed by running them, not just by finding the binary). */
  available: { bwrap: boolean; unshare: boolean };
}

/** Options of a {@link Sandbox}. */
export interface SandboxOptions {
  /** 'auto' (default) picks bwrap, then unshare; a named kind forces it (refusing runs when it does not work). */
  isolation?: 'auto' | IsolationKind;
  /** Permit unisolated runs: when no isolation is available, or when `isolation: 'none'` is asked for (default false: such runs are refused). */
  allowUnisolated?: boolean;
  /**
   * How many runs execute at once (default: the number of CPUs, or with `slots` the slots' count). With `slots`, it
   * caps this sandbox's share of them.
   */
  concurrency?: number;
  /**
   * Run slots shared with other sandboxes (a {@link SharedSandboxPool}'s): a run waits for one of this sandbox's own
   * `concurrency` places, then for a shared slot, so sandboxes with different isolation settings never run more
   * programs at once, together, than the slots allow.
   */
  slots?: TaskPool;
  /** Limits overriding {@link DEFAULT_LIMITS} for every run of this sandbox. */
  defaults?: Partial<SandboxLimits>;
  /** The Python interpreter command (default 'python3', resolved once to its real executable). */
  python?: string;
  /** The Node.js executable for JavaScript (default: the Node running this process). */
  node?: string;
}
