/**
 * The slice of the sandbox the math environment uses, as the kernel's service contracts type it, so tests can inject
 * a fake runner and the real one comes from the process's sandbox pool.
 */
import type { ProgramLimits, ProgramRun, ProgramRunner, ProgramRunResult, SandboxSettings } from '@troupe/kernel';

/** Limits of one run (the sandbox fills the rest with its defaults). */
export type SandboxLimitsLike = ProgramLimits;

/** One program run request. */
export type SandboxRunRequest = ProgramRun;

/** What a run returns. */
export type SandboxRunResult = ProgramRunResult;

/** Anything that runs programs like a runner of the sandbox pool. */
export type SandboxLike = Pick<ProgramRunner, 'run'>;

/** The settings of the runner the environment asks the pool for (`environment.config.sandbox` without `limits`). */
export type SandboxOptionsLike = SandboxSettings;
