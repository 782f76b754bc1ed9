/**
 * The outcome of one run of an experiment, as the runner records it (`result.json`, `failure.json`) and the table
 * reads it.
 */
import type { ArmLevel, ArmName } from './arms.js';

/** Where a run started from (see {@link RunResult.source}); paths relative to the experiment's output folder. */
export interface RunSource {
  /** The source arm (same game and seed). */
  readonly arm: ArmName;
  /** What was taken from it. */
  readonly uses: 'warm-start' | 'final';
  /** Its run folder. */
  readonly dir: string;
  /** The checkpoint loaded (for `final`: once known). */
  readonly checkpoint?: string;
}

/** The outcome of one run (`result.json` / `failure.json`). */
export interface RunResult {
  /** Game label. */
  readonly game: string;
  /** Arm. */
  readonly arm: ArmName;
  /** Seed index. */
  readonly seed: number;
  /** The spec's master seed. */
  readonly specSeed: number;
  /** `ok`, or `failed` (see `error`). */
  readonly status: 'ok' | 'failed';
  /** The mapping level the spec trains at. */
  readonly level: ArmLevel;
  /** The algorithm after the warm start. */
  readonly algorithm: string;
  /** Held-out evaluation (greedy, K = 1). */
  readonly eval?: {
    readonly split: string;
    readonly episodes: number;
    readonly successes: number;
    readonly successRate: number;
    readonly ci95: readonly [number, number];
  };
  /** Swap only: the per-role policies on their own seats, loaded the same way (must match the per-role result). */
  readonly control?: { readonly episodes: number; readonly successes: number; readonly successRate: number };
  /** Sample accounting of RL arms (zeros for the others). */
  readonly samples: {
    /** The budget the run was topped up to. */
    readonly budget: number;
    /** Generated RL samples (sum of `rollout/samples`). */
    readonly generated: number;
    /**
     * Samples trained on: those in groups with a signal (sum of `loss/<policy>/trained_samples`; runs from before that
     * key count every sample the update took, `loss/<policy>/samples`). grpo-naive trains on last-turn samples only.
     */
    readonly trained: number;
    /** Steps run. */
    readonly steps: number;
    /** Steps planned from the budget. */
    readonly plannedSteps: number;
    /** B, K and the most samples one step can generate (B·K·N·T). */
    readonly batchSize: number;
    readonly branches: number;
    readonly samplesPerStep: number;
    /** Top-up invocations after the planned steps. */
    readonly topUps: number;
  };
  /** Warm-start demonstration samples (from metrics.jsonl), when the run had a warm start of its own. */
  readonly warmStartSamples?: number;
  /**
   * The run it started from (`warm-start`: its policies were loaded from that run's step-0 checkpoint, the shared warm
   * start) or evaluated (`final`, swap: that run's newest checkpoint). Absent for runs with their own warm start.
   */
  readonly source?: RunSource;
  /** Wall seconds of this run's child processes. */
  readonly seconds: number;
  /** The results file this result was reused from (`ExperimentOptions.reuse`): the run was not run again. */
  readonly reusedFrom?: string;
  /** Run folder, relative to the experiment's output folder. */
  readonly dir: string;
  /** Plan digest (see the runner's `PlannedRun.digest`). */
  readonly digest: string;
  /** Failure message (status `failed`). */
  readonly error?: string;
}

/** The error of a planned run that `collectResults` (`--report-only`) found neither finished nor failed. */
export const NOT_RUN_YET = 'not run yet (the table of the runs finished so far, --report-only)';

/** Whether a run's result is only the placeholder of one not run yet. */
export const notRunYet = (r: Pick<RunResult, 'status' | 'error'>): boolean =>
  r.status !== 'ok' && r.error === NOT_RUN_YET;
