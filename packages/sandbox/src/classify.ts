import type { RawOutcome } from './execute.js';
import { signalName } from './execute.js';
import { availableParallelism } from 'node:os';
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
  /Fatal process out of memory/,
];

/** True when `stderr` shows an out-of-memory failure. */
export function looksOutOfMemory(stderr: string): boolean {
  return MEMORY_PATTERNS.some((re) => re.test(stderr));
}

/**
 * The least wall time in which a process can use `cpuMs` of CPU time: its threads (at most `maxProcesses`) run on at
 * most every core of the machine at once. A SIGXCPU earlier than this cannot come from the CPU time limit.
 */
export function leastWallForCpu(cpuMs: number, limits: SandboxLimits, cores = availableParallelism()): number {
  return cpuMs / Math.max(1, Math.min(limits.maxProcesses, cores));
}

/**
 * Turns a raw outcome into a {@link RunResult}. When the run went through a namespace launcher (bwrap, or the
 * unshare script), an exit status of 128+n means the program was killed by signal n or exited with 128+n itself:
 * both launchers report the two alike. Such a run is reported with that signal, and the reason says both readings;
 * a SIGXCPU counts as the CPU time limit only when the run lasted long enough to use that much CPU time.
 */
export function classify(raw: RawOutcome, kind: IsolationKind, limits: SandboxLimits): RunResult {
  let exitCode = raw.exitCode;
  let signal = raw.signal;
  let either = '';
  if (kind !== 'none' && signal === null && exitCode !== null && exitCode > 128 && exitCode <= 128 + 64) {
    signal = signalName(exitCode - 128);
    either = ` (exit status ${exitCode}: killed by ${signal}, or the program exited with ${exitCode} itself; ${kind} reports both alike)`;
    exitCode = null;
  }
  const stdout = raw.stdout.toString('utf8');
  const stderr = raw.stderr.toString('utf8');
  const base = { exitCode, signal, stdout, stderr, wallMs: raw.wallMs, truncated: raw.outputExceeded, isolation: kind };
  if (raw.spawnError !== undefined) {
    return { ...base, verdict: 'refused', reason: `could not start the sandbox: ${raw.spawnError}` };
  }
  if (raw.aborted) return { ...base, verdict: 'runtime-error', reason: "aborted by the caller's AbortSignal" };
  if (raw.outputExceeded)
    return { ...base, verdict: 'output-limit', reason: `output exceeded ${limits.maxOutputBytes} bytes` };
  if (raw.wallExceeded)
    return { ...base, verdict: 'timeout', reason: `wall time limit of ${limits.wallMs} ms exceeded` };
  const cpuSeconds = Math.max(1, Math.ceil(limits.cpuMs / 1000));
  if (signal === 'SIGXCPU') {
    const least = leastWallForCpu(cpuSeconds * 1000, limits);
    if (raw.wallMs >= least)
      return {
        ...base,
        verdict: 'timeout',
        reason: `CPU time limit of ${limits.cpuMs} ms exceeded (SIGXCPU)${either}`,
      };
    return {
      ...base,
      verdict: 'runtime-error',
      reason: `not the CPU time limit: the run lasted ${raw.wallMs} ms, less than the ${Math.ceil(least)} ms it takes to use ${cpuSeconds} s of CPU time${either || ' (SIGXCPU came from elsewhere)'}`,
    };
  }
  const failed = signal !== null || (exitCode !== null && exitCode !== 0);
  if (failed && looksOutOfMemory(stderr))
    return { ...base, verdict: 'memory-limit', reason: `memory limit of ${limits.memoryMb} MiB exceeded` };
  // Only a program that catches SIGXCPU meets the hard CPU limit (SIGKILL); it needs at least the soft limit in wall time.
  if (signal === 'SIGKILL' && raw.wallMs >= cpuSeconds * 1000)
    return {
      ...base,
      verdict: 'timeout',
      reason: `killed by SIGKILL (the CPU time hard limit of ${cpuSeconds + 1} s)`,
    };
  if (signal === 'SIGXFSZ')
    return {
      ...base,
      verdict: 'runtime-error',
      reason: `file size limit of ${limits.maxFileBytes} bytes exceeded (SIGXFSZ)${either}`,
    };
  if (signal !== null)
    return { ...base, verdict: 'runtime-error', reason: either ? either.slice(2, -1) : `killed by ${signal}` };
  if (exitCode !== 0) return { ...base, verdict: 'runtime-error', reason: `exit code ${exitCode}` };
  return { ...base, verdict: 'ok' };
}
