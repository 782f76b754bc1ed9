/**
 * The team spec's `execution` section resolved: where rollouts run (this process, or jobs on Redis played by
 * `troupe worker` processes), with the command line's `--redis` / `--shared` over the spec's keys and the defaults
 * filled in. The team schema checks the keys and their values (with file:line:col); this adds the rules across them.
 */
import { dirname, isAbsolute, resolve } from 'node:path';
import { EMBEDDED, specIssue } from './load.js';
import { SpecError } from './errors.js';
import type { TeamSpec } from './types.js';

/** The resolved `execution` section. */
export interface ExecutionSettings {
  /** `in-process` (default) or `bullmq`. */
  readonly engine: 'in-process' | 'bullmq';
  /** Redis URL (bullmq). */
  readonly redis: string | undefined;
  /** Queue name shared by the trainer and its workers. */
  readonly queue: string;
  /** Pool of each policy's generation. */
  readonly pools: Readonly<Record<string, string>>;
  /**
   * Pool of each policy's RL update (bullmq only): that policy's update of each step is a job taken by the pool's
   * workers; the other policies update in the trainer's process.
   */
  readonly updatePools: Readonly<Record<string, string>>;
  /** Tries per job. */
  readonly attempts: number;
  /** A step's jobs not done this long after they went out fail (undefined: no deadline). */
  readonly deadlineMs: number | undefined;
  /** How long Redis may stay unreachable before the run stops. */
  readonly redisTimeoutMs: number;
  /** Shared folder of policy versions (absolute), or undefined: `<run>/policies`. */
  readonly checkpoints: string | undefined;
  /** Lockstep batching of an in-process run: per instance (default; always with bullmq) or across the step. */
  readonly batching: 'step' | 'instance';
}

/** Defaults of `execution`. */
export const EXECUTION_DEFAULTS = {
  queue: 'troupe-rollouts',
  attempts: 3,
  redisTimeoutMs: 30_000,
} as const;

/** Command-line overrides of `execution`. */
export interface ExecutionOverrides {
  /** `--redis URL`: the bullmq engine on this Redis. */
  readonly redis?: string;
  /** `--shared DIR`: the shared folder of policy versions (relative to the current directory). */
  readonly shared?: string;
}

/** Resolves a spec's `execution` with command-line overrides (see the module comment). Throws {@link SpecError}. */
export function resolveExecution(spec: TeamSpec, overrides: ExecutionOverrides = {}): ExecutionSettings {
  const e = spec.execution ?? {};
  const redis = overrides.redis ?? e.redis;
  const engine =
    overrides.redis !== undefined ? 'bullmq' : (e.engine ?? (e.redis !== undefined ? 'bullmq' : 'in-process'));
  if (engine === 'bullmq' && redis === undefined)
    throw new SpecError(spec.file, [
      specIssue(
        spec,
        ['execution', 'engine'],
        'the bullmq engine needs a Redis URL',
        'add execution.redis: redis://host:6379, or pass --redis URL',
      ),
    ]);
  if (engine !== 'bullmq' && Object.keys(e.updatePools ?? {}).length > 0)
    throw new SpecError(spec.file, [
      specIssue(
        spec,
        ['execution', 'updatePools'],
        'update pools need the bullmq engine: the updates are jobs on Redis taken by `troupe worker --pool NAME`',
        'add execution.redis: redis://host:6379 (or pass --redis URL), or remove execution.updatePools',
      ),
    ]);
  if (overrides.redis !== undefined && !/^rediss?:\/\//.test(overrides.redis))
    throw new SpecError(spec.file, [
      {
        file: '--redis',
        line: 0,
        col: 0,
        path: '--redis',
        message: `${JSON.stringify(overrides.redis)} is not a Redis URL`,
        hint: 'give redis://host:port (e.g. redis://127.0.0.1:6379)',
      },
    ]);
  const base = spec.file === EMBEDDED ? process.cwd() : dirname(spec.file);
  const checkpoints =
    overrides.shared !== undefined
      ? resolve(overrides.shared)
      : e.checkpoints !== undefined
        ? isAbsolute(e.checkpoints)
          ? e.checkpoints
          : resolve(base, e.checkpoints)
        : undefined;
  return {
    engine,
    redis: engine === 'bullmq' ? redis : undefined,
    queue: e.queue ?? EXECUTION_DEFAULTS.queue,
    pools: e.pools ?? {},
    updatePools: e.updatePools ?? {},
    attempts: e.attempts ?? EXECUTION_DEFAULTS.attempts,
    deadlineMs: e.deadlineMs,
    redisTimeoutMs: e.redisTimeoutMs ?? EXECUTION_DEFAULTS.redisTimeoutMs,
    checkpoints,
    batching: engine === 'bullmq' ? 'instance' : (e.batching ?? 'instance'),
  };
}
