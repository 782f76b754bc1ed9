import type { RawOutcome } from './execute.js';
import { signalName } from './execute.js';
import type { IsolationKind, RunResult, SandboxLimits } from './types.js';

/** stderr patterns that mean the program ran out of memory (Python, V8, libc, C++). */
const MEMORY_PATTERNS = [
  /^MemoryError\b/m,
  /\bMemoryError\b\s*$/,
  /JavaScript heap out of memory/,
  /Array buffer allocation failed/,
  /Cannot allocate memory/i,
  /could not allocate memory/i,
  /std::bad_alloc/,
  /\bENOMEM\b/,
  /Fatal Python error: .*(memory|MemoryError)/i,
];

/** True when `stderr` shows an out-of-memory failure. */
export function looksOutOfMemory(stderr: string): boolean {
  return MEMORY_PATTERNS.some((re) => re.test(stderr));
}

/**
 * Turns a raw outcome into a {@link RunResult}. When the run went through a namespace launcher (bwrap, or the
 * unshare script), an exit status of 128+n means the program was killed by signal n (that is how both report it),
 * so a program that itself exits with 129..192 is reported as killed by that signal.
 */
export function classify(raw: RawOutcome, kind: IsolationKind, limits: SandboxLimits): RunResult {
  let exitCode = raw.exitCode;
  let signal = raw.signal;
  if (kind !== 'none' && signal === null && exitCode !== null && exitCode > 128 && exitCode <= 128 + 64) {
    signal = signalName(exitCode - 128);
    exitCode = null;
  }
  const stdout = raw.stdout.toString('utf8');
  const stderr = raw.stderr.toString('utf8');
  const base = { exitCode, signal, stdout, stderr, wallMs: raw.wallMs, truncated: raw.outputExceeded, isolation: kind };
  if (raw.spawnError !== undefined) {
    return { ...base, verdict: 'refused', reason: `could not start the sandbox: ${raw.spawnError}` };
  }
  if (raw.aborted) return { ...base, verdict: 'runtime-error', reason: "aborted by the caller's AbortSignal" };
  if (raw.outputExceeded) return { ...base, verdict: 'output-limit', reason: `output exceeded ${limits.maxOutputBytes} bytes` };
  if (raw.wallExceeded) return { ...base, verdict: 'timeout', reason: `wall time limit of ${limits.wallMs} ms exceeded` };
  if (signal === 'SIGXCPU') return { ...base, verdict: 'timeout', reason: `CPU time limit of ${limits.cpuMs} ms exceeded (SIGXCPU)` };
  const failed = signal !== null || (exitCode !== null && exitCode !== 0);
  if (failed && looksOutOfMemory(stderr)) return { ...base, verdict: 'memory-limit', reason: `memory limit of ${limits.memoryMb} MiB exceeded` };
  // Only a program that catches SIGXCPU meets the hard CPU limit (SIGKILL); it needs at least the soft limit in wall time.
  const cpuSeconds = Math.max(1, Math.ceil(limits.cpuMs / 1000));
  if (signal === 'SIGKILL' && raw.wallMs >= cpuSeconds * 1000) return { ...base, verdict: 'timeout', reason: `killed by SIGKILL (the CPU time hard limit of ${cpuSeconds + 1} s)` };
  if (signal === 'SIGXFSZ') return { ...base, verdict: 'runtime-error', reason: `file size limit of ${limits.maxFileBytes} bytes exceeded (SIGXFSZ)` };
  if (signal !== null) return { ...base, verdict: 'runtime-error', reason: `killed by ${signal}` };
  if (exitCode !== 0) return { ...base, verdict: 'runtime-error', reason: `exit code ${exitCode}` };
  return { ...base, verdict: 'ok' };
}
