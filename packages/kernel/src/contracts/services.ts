/**
 * Shared services: one instance per process, bound by the host (the CLI binds the real ones; a test binds its own)
 * and injected into contributions by token: `injectParameters(MyContribution, [SandboxPool])` names what its
 * constructor receives (inversify's `@inject`, applied without parameter decorators; see `di.ts`).
 *
 * The kernel defines the tokens and interfaces only. It implements the light ones (a {@link Logger} on stderr,
 * {@link RandomStreams} over `deriveSeed`, in `services/`); the sandbox pool is implemented by `@troupe/sandbox`
 * and the tokenizer cache next to the tokenizers, so the kernel stays free of both.
 */
import type { ProgramLanguage, Rng } from './common.js';

/** Token of the process's {@link SandboxPool}. */
export const SandboxPool = Symbol.for('troupe.SandboxPool');

/** Token of the process's {@link Logger}. */
export const Logger = Symbol.for('troupe.Logger');

/** Token of the process's {@link RandomStreams}. */
export const RandomStreams = Symbol.for('troupe.RandomStreams');

/** Token of the process's {@link TokenizerCache}. */
export const TokenizerCache = Symbol.for('troupe.TokenizerCache');

/** Resource limits of one program run (integers; the sandbox fills what is not given with its defaults). */
export interface ProgramLimits {
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

/** One program to run in the sandbox. */
export interface ProgramRun {
  /** Language of `source`. */
  readonly language: ProgramLanguage;
  /** The program text. */
  readonly source: string;
  /** Text fed to its stdin. */
  readonly stdin?: string;
  /** Per-run limits. */
  readonly limits?: ProgramLimits;
  /** Extra files in its working directory: relative path → content. */
  readonly files?: Record<string, string>;
  /** Command-line arguments. */
  readonly args?: string[];
  /** Aborting kills the run. */
  readonly signal?: AbortSignal;
}

/** How a program run ended (the sandbox's verdicts). */
export type ProgramVerdict = 'ok' | 'runtime-error' | 'timeout' | 'memory-limit' | 'output-limit' | 'refused';

/** What a program run returned. */
export interface ProgramRunResult {
  /** The classification of the run; `refused` means it did not run (see `reason`). */
  readonly verdict: ProgramVerdict;
  /** Exit code; null when killed or never run. */
  readonly exitCode: number | null;
  /** The signal that killed it, or null. */
  readonly signal?: string | null;
  /** Standard output. */
  readonly stdout: string;
  /** Standard error. */
  readonly stderr: string;
  /** Wall-clock duration, ms. */
  readonly wallMs?: number;
  /** Whether an output was cut at the limit. */
  readonly truncated?: boolean;
  /** The isolation the run used. */
  readonly isolation?: string;
  /** Why the verdict is what it is, when not obvious. */
  readonly reason?: string;
}

/** Runs programs; never rejects (every problem is a result with verdict `refused` and a reason). */
export interface ProgramRunner {
  /** Runs one program. */
  run(request: ProgramRun): Promise<ProgramRunResult>;
  /** Runs many programs; results in request order. */
  runMany(requests: readonly ProgramRun[]): Promise<ProgramRunResult[]>;
}

/** How a contribution wants its programs isolated (a config's `sandbox` object). */
export interface SandboxSettings {
  /** `auto` picks the best isolation available; a named kind forces it. */
  readonly isolation?: 'auto' | 'bwrap' | 'unshare' | 'none';
  /** Permit unisolated runs when no isolation works or `none` is asked for. */
  readonly allowUnisolated?: boolean;
  /** At most this many of these runs at once (a share of the pool's slots; default: all of them). */
  readonly concurrency?: number;
  /** Limits of every run through this runner, unless the run states its own. */
  readonly defaults?: ProgramLimits;
}

/**
 * The process's one pool of sandbox slots. Every contribution that runs programs (the code and math environments,
 * the coder role) asks it for a runner with its own settings; all runners share the pool's slots, so a process never
 * runs more programs at once than the pool allows, however many environments and roles it creates.
 */
export interface SandboxPool {
  /** How many programs run at once, all runners together. */
  readonly concurrency: number;
  /** A runner with `settings`; equal settings give the same runner. Throws a RangeError for invalid settings. */
  runner(settings?: SandboxSettings): ProgramRunner;
  /** Refuses new runs, kills the running ones and waits until they are cleaned up. */
  close(): Promise<void>;
}

/** Log levels, from the most verbose. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Every log level, from the most verbose. */
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/**
 * Where plugins and the kernel report what a user may want to know (the CLI's progress display is separate).
 * `fields` are JSON-serialisable facts (ids, counts, paths).
 */
export interface Logger {
  /** Messages at this level and above are written. */
  readonly level: LogLevel;
  /** Whether a message at `level` would be written (skip building costly messages otherwise). */
  enabled(level: LogLevel): boolean;
  debug(message: string, fields?: Readonly<Record<string, unknown>>): void;
  info(message: string, fields?: Readonly<Record<string, unknown>>): void;
  warn(message: string, fields?: Readonly<Record<string, unknown>>): void;
  error(message: string, fields?: Readonly<Record<string, unknown>>): void;
  /** A logger whose messages are prefixed with `scope` (e.g. a contribution id). */
  child(scope: string): Logger;
}

/**
 * Named, seed-derived random streams. `stream(seed, 'code-v0', split)` is `createRng(deriveSeed(seed, 'code-v0',
 * split))`: the same parts always give the same stream, in every process, so a contribution that draws from it is as
 * reproducible as one that derives its seeds itself.
 */
export interface RandomStreams {
  /** The 32-bit seed named by `parts` (`deriveSeed(...parts)`). */
  seed(...parts: readonly (string | number)[]): number;
  /** A fresh generator of the stream named by `parts`. */
  stream(...parts: readonly (string | number)[]): Rng;
}

/**
 * Tokenizers loaded once per folder and shared by every policy of the process that reads the same folder. `T` is
 * the tokenizer type of the package that binds it (`@troupe/lm`'s `Tokenizer`).
 */
export interface TokenizerCache<T = unknown> {
  /** The tokenizer of a model folder (loaded on first use; a failed load is not cached). */
  load(dir: string): Promise<T>;
}
