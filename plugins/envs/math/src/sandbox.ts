/**
 * The slice of `@troupe/sandbox` the math environment uses, typed structurally so tests can inject a fake and the
 * real `Sandbox` is loaded only when a program must actually run.
 */

/** Limits of one run (a subset; the sandbox fills the rest with its defaults). */
export interface SandboxLimitsLike {
  /** CPU time per process, ms. */
  readonly cpuMs?: number;
  /** Wall-clock time of the run, ms. */
  readonly wallMs?: number;
  /** Memory per process, MiB. */
  readonly memoryMb?: number;
  /** Processes and threads at once. */
  readonly maxProcesses?: number;
  /** Bytes kept of stdout and of stderr. */
  readonly maxOutputBytes?: number;
  /** Largest file the program may write, bytes. */
  readonly maxFileBytes?: number;
}

/** One program run request. */
export interface SandboxRunRequest {
  readonly language: 'python' | 'javascript';
  readonly source: string;
  readonly stdin?: string;
  readonly limits?: Partial<SandboxLimitsLike>;
  readonly signal?: AbortSignal;
}

/** What a run returns. */
export interface SandboxRunResult {
  readonly verdict: 'ok' | 'runtime-error' | 'timeout' | 'memory-limit' | 'output-limit' | 'refused';
  readonly exitCode: number | null;
  readonly signal?: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly wallMs?: number;
  readonly truncated?: boolean;
  readonly isolation?: string;
  readonly reason?: string;
}

/** Anything that runs programs like `@troupe/sandbox`'s `Sandbox`. */
export interface SandboxLike {
  run(request: SandboxRunRequest): Promise<SandboxRunResult>;
}

/** Options passed to `new Sandbox(options)` when the environment creates its own. */
export interface SandboxOptionsLike {
  readonly isolation?: 'auto' | 'bwrap' | 'unshare' | 'none';
  readonly allowUnisolated?: boolean;
  readonly concurrency?: number;
  readonly defaults?: Partial<SandboxLimitsLike>;
}

/** Creates the real sandbox from `@troupe/sandbox` (imported on first use). */
export async function createDefaultSandbox(options: SandboxOptionsLike): Promise<SandboxLike> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import('@troupe/sandbox')) as unknown as Record<string, unknown>;
  } catch (err) {
    throw new Error(`math-v0: cannot load @troupe/sandbox to run the coder's program (${err instanceof Error ? err.message : String(err)})`);
  }
  const Ctor = mod.Sandbox as (new (o: SandboxOptionsLike) => SandboxLike) | undefined;
  if (typeof Ctor !== 'function') throw new Error('math-v0: @troupe/sandbox does not export a Sandbox class');
  return new Ctor(options);
}
