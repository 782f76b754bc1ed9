import { ChildProcessWithoutNullStreams, spawn, StdioOptions } from 'node:child_process';
import { openSync, readdirSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import type { SpawnPlan } from './command.js';

/** What the host saw of one spawned run, before classification. */
export interface RawOutcome {
  /** Exit code of the spawned process (null when killed by a signal). */
  exitCode: number | null;
  /** Signal that killed the spawned process, or null. */
  signal: string | null;
  /** Captured stdout (at most the cap). */
  stdout: Buffer;
  /** Captured stderr (at most the cap). */
  stderr: Buffer;
  /** True when a stream went over the cap (the run was killed). */
  outputExceeded: boolean;
  /** True when the wall-time limit killed the run. */
  wallExceeded: boolean;
  /** True when the caller's AbortSignal killed the run. */
  aborted: boolean;
  /** Wall-clock duration in milliseconds. */
  wallMs: number;
  /** Set when the process could not be started at all. */
  spawnError?: string;
}

/** Options of {@link execute}. */
export interface ExecuteOptions {
  /** Text for stdin. */
  stdin: string;
  /** Wall-time limit in milliseconds. */
  wallMs: number;
  /** Bytes kept per stream; more kills the run. */
  maxOutputBytes: number;
  /** Abort kills the run. */
  signal?: AbortSignal;
}

const SIGNAL_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(constants.signals).map(([name, num]) => [num, name]),
);

/** The name of signal number `n` ('SIGKILL'), or `SIG<n>`. */
export function signalName(n: number): string {
  return SIGNAL_NAMES[n] ?? `SIG${n}`;
}

/** The close-on-exec bit in the `flags:` line of /proc/self/fdinfo/N (O_CLOEXEC, octal 02000000). */
const O_CLOEXEC = 0o2000000;

/**
 * The descriptors above 2 a child of this process would inherit: those without close-on-exec, as the kernel lists
 * them in /proc/self/fdinfo. Node opens its own with O_CLOEXEC, but a descriptor left open by whoever started Node
 * (`exec 20<dir` in a shell) or by a native addon is passed on to every child — and a directory descriptor lets a
 * program `fchdir` out of any mount namespace or chroot. Throws when the list cannot be read.
 */
export function inheritableFds(): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc/self/fdinfo')) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    let info: string;
    try {
      info = readFileSync(`/proc/self/fdinfo/${name}`, 'utf8');
    } catch {
      continue; // closed since the listing (the listing's own descriptor)
    }
    const flags = /^flags:\s*([0-7]+)/m.exec(info);
    if (!flags || (parseInt(flags[1]!, 8) & O_CLOEXEC) === 0) out.push(fd);
  }
  return out;
}

let devNull: number | undefined;

/**
 * The child's descriptor table: 0–2 are pipes, `inputs` are pipes at 3, 4, …, and every other inheritable
 * descriptor of this process is replaced by /dev/null at the same number (libuv dup2()s it there before the exec),
 * so nothing the host holds open reaches the launcher, let alone the program.
 */
export function childStdio(inputs: number): StdioOptions {
  const stdio: (string | number)[] = ['pipe', 'pipe', 'pipe', ...Array.from({ length: inputs }, () => 'pipe')];
  const leaks = inheritableFds().filter((fd) => fd >= stdio.length);
  if (leaks.length > 0) {
    devNull ??= openSync('/dev/null', 'r');
    for (const fd of leaks) {
      while (stdio.length < fd) stdio.push('ignore');
      stdio[fd] = devNull;
    }
  }
  return stdio as StdioOptions;
}

/** After the main process exits, how long to wait for the pipes to close before forcing them shut. */
const DRAIN_GRACE_MS = 200;

/**
 * Spawns `plan` in its own process group with only the descriptors of {@link childStdio}, feeds stdin and the plan's
 * inputs, captures stdout/stderr up to the cap, and kills the whole
 * process group (SIGKILL) on wall timeout, output overflow, abort, and always once the main process has exited.
 * Never rejects.
 */
export function execute(plan: SpawnPlan, opts: ExecuteOptions): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const started = performance.now();
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let outputExceeded = false;
    let wallExceeded = false;
    let aborted = false;
    let settled = false;
    let exitCode: number | null = null;
    let exitSignal: string | null = null;
    let exited = false;
    let drainTimer: NodeJS.Timeout | undefined;

    let child: ChildProcessWithoutNullStreams;
    try {
      const inputs = plan.inputs ?? [];
      // Descriptors 0-2 are pipes, so the streams are there.
      child = spawn(plan.command, plan.args, {
        cwd: plan.cwd,
        env: plan.env,
        stdio: childStdio(inputs.length),
        detached: true,
      }) as ChildProcessWithoutNullStreams;
      inputs.forEach((data, i) => {
        const pipe = child.stdio[3 + i] as NodeJS.WritableStream & { on(e: 'error', f: () => void): void };
        pipe.on('error', () => undefined);
        pipe.end(data);
      });
    } catch (e) {
      resolve({
        exitCode: null,
        signal: null,
        stdout: Buffer.alloc(0),
        stderr: Buffer.alloc(0),
        outputExceeded,
        wallExceeded,
        aborted,
        wallMs: 0,
        spawnError: String(e),
      });
      return;
    }

    const killGroup = (): void => {
      // After the leader is reaped its pid (and so the group id) may be reused: kill only before that.
      if (child.pid === undefined || settled || exited) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };

    const finish = (spawnError?: string): void => {
      if (settled) return;
      killGroup();
      settled = true;
      clearTimeout(wallTimer);
      if (drainTimer) clearTimeout(drainTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      child.stdout?.destroy();
      child.stderr?.destroy();
      child.stdin?.destroy();
      resolve({
        exitCode,
        signal: exitSignal,
        stdout: Buffer.concat(out),
        stderr: Buffer.concat(err),
        outputExceeded,
        wallExceeded,
        aborted,
        wallMs: Math.round(performance.now() - started),
        spawnError,
      });
    };

    const wallTimer = setTimeout(() => {
      wallExceeded = true;
      killGroup();
    }, opts.wallMs);
    const onAbort = (): void => {
      aborted = true;
      killGroup();
    };
    if (opts.signal) {
      if (opts.signal.aborted) onAbort();
      else opts.signal.addEventListener('abort', onAbort, { once: true });
    }

    const take = (chunks: Buffer[], used: number, chunk: Buffer): number => {
      const room = opts.maxOutputBytes - used;
      if (chunk.length > room) {
        if (room > 0) chunks.push(chunk.subarray(0, room));
        if (!outputExceeded) {
          outputExceeded = true;
          killGroup();
        }
        return used + Math.max(room, 0);
      }
      chunks.push(chunk);
      return used + chunk.length;
    };
    child.stdout.on('data', (c: Buffer) => {
      if (!outputExceeded) outBytes = take(out, outBytes, c);
    });
    child.stderr.on('data', (c: Buffer) => {
      if (!outputExceeded) errBytes = take(err, errBytes, c);
    });

    child.stdin.on('error', () => {
      // the program need not read its stdin (EPIPE)
    });
    child.stdin.end(opts.stdin);

    child.on('error', (e) => finish(String(e)));
    child.on('exit', (code, sig) => {
      // Background processes that kept the pipes open must not hold the run: kill the group, then force-close.
      killGroup();
      exited = true;
      exitCode = code;
      exitSignal = sig;
      drainTimer = setTimeout(() => finish(), DRAIN_GRACE_MS);
    });
    child.on('close', () => {
      if (exited) finish();
    });
  });
}
