/**
 * Test doubles for the sandbox: `LocalPythonSandbox` runs TRUSTED test programs with the machine's python3 directly
 * (no isolation; fast), and `ScriptedSandbox` returns canned results. Never use them for untrusted code.
 */
import { spawnSync } from 'node:child_process';
import type { ProgramRunner, SandboxPool, SandboxSettings } from '@troupe/kernel';
import type { SandboxLike, SandboxRunRequest, SandboxRunResult } from '../../src/index.js';

/** Runs Python (or JavaScript) programs with a plain child process and classifies them like the sandbox. */
export class LocalPythonSandbox implements SandboxLike {
  /** Every request seen, in order. */
  readonly requests: SandboxRunRequest[] = [];

  /** {@inheritDoc SandboxLike.run} */
  async run(request: SandboxRunRequest): Promise<SandboxRunResult> {
    this.requests.push(request);
    const command = request.language === 'python' ? python3Executable() : process.execPath;
    const args = request.language === 'python' ? ['-c', request.source] : ['-e', request.source];
    const started = Date.now();
    const r = spawnSync(command, args, {
      input: request.stdin ?? '',
      encoding: 'utf8',
      timeout: request.limits?.wallMs ?? 5000,
    });
    const timedOut = (r.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT';
    return {
      verdict: timedOut ? 'timeout' : r.status === 0 ? 'ok' : 'runtime-error',
      exitCode: r.status,
      signal: r.signal,
      stdout: r.stdout ?? '',
      stderr: r.stderr ?? '',
      wallMs: Date.now() - started,
      truncated: false,
      isolation: 'none',
    };
  }
}

/** Returns `respond(request)` for every run. */
export class ScriptedSandbox implements SandboxLike {
  /** Every request seen, in order. */
  readonly requests: SandboxRunRequest[] = [];
  constructor(private readonly respond: (request: SandboxRunRequest) => Partial<SandboxRunResult>) {}
  /** {@inheritDoc SandboxLike.run} */
  async run(request: SandboxRunRequest): Promise<SandboxRunResult> {
    this.requests.push(request);
    return {
      verdict: 'ok',
      exitCode: 0,
      signal: null,
      stdout: '',
      stderr: '',
      wallMs: 1,
      truncated: false,
      isolation: 'none',
      ...this.respond(request),
    };
  }
}

/**
 * A fast fake for logic tests: understands only programs made of `print(<JSON literal or number>)` lines
 * (what `prints()` in the tests writes) and `raise ...` (a crash with a traceback on stderr).
 */
export class PrintSandbox implements SandboxLike {
  /** {@inheritDoc SandboxLike.run} */
  async run(request: SandboxRunRequest): Promise<SandboxRunResult> {
    let stdout = '';
    for (const line of request.source
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)) {
      const m = /^print\((.*)\)$/.exec(line);
      if (m) {
        stdout += `${String(JSON.parse(m[1]!))}\n`;
        continue;
      }
      if (line.startsWith('raise')) {
        return {
          verdict: 'runtime-error',
          exitCode: 1,
          signal: null,
          stdout,
          stderr: `Traceback (most recent call last):\n${line}\n`,
          wallMs: 1,
          truncated: false,
          isolation: 'none',
        };
      }
      if (line.startsWith('x =') || line.startsWith('#')) continue;
      throw new Error(`PrintSandbox cannot run: ${line}`);
    }
    return {
      verdict: 'ok',
      exitCode: 0,
      signal: null,
      stdout,
      stderr: '',
      wallMs: 1,
      truncated: false,
      isolation: 'none',
    };
  }
}

let pythonPath: string | undefined;
/** The real python3 executable (skips the pyenv shim, which costs a second per run on a loaded machine). */
export function python3Executable(): string {
  if (pythonPath === undefined) {
    const r = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' });
    pythonPath = r.status === 0 && r.stdout.trim() ? r.stdout.trim() : 'python3';
  }
  return pythonPath;
}

/** A sandbox pool whose every runner is `runner` (the settings asked for are recorded). */
export class FixedPool implements SandboxPool {
  readonly concurrency = 1;
  /** The settings of every `runner()` call, in order. */
  readonly asked: SandboxSettings[] = [];
  constructor(private readonly fixed: SandboxLike) {}
  runner(settings: SandboxSettings = {}): ProgramRunner {
    this.asked.push(settings);
    return { run: (r) => this.fixed.run(r), runMany: (rs) => Promise.all(rs.map((r) => this.fixed.run(r))) };
  }
  async close(): Promise<void> {}
}
