/**
 * The experiment runner: arms × games × seeds, each run a CHILD PROCESS of the troupe CLI (`troupe train`,
 * `troupe eval`) on a generated spec file in its own run folder, so that `jobs: 2` keeps two cores busy (the wasm
 * backend is single-threaded) and a crash of one run is recorded, not fatal.
 *
 * ```
 * <out>/runs/<game>/<arm>/seed-<s>/
 *   spec.yaml                  the arm's generated team spec (swap: swap.yaml + control.yaml)
 *   metrics.jsonl, trace.jsonl, checkpoints/, report.md   what `troupe train` writes
 *   troupe.log                 every child's command line, stdout and stderr
 *   result.json                written last, when the run succeeded (a rerun skips the run)
 *   failure.json               when it failed (a rerun retries it, resuming from its newest checkpoint)
 * ```
 *
 * Per run:
 * - no-RL arm: `troupe train spec.yaml --resume` (warm start, step-0 checkpoint, final held-out evaluation).
 * - RL arm: its spec loads the policies of its warm-start source's step-0 checkpoint (`single-grpo` ← `single`,
 *   `mas-naive-grpo` and `mas-atgrpo-per-role` ← `mas-prompt`; `mas-atgrpo-shared` has its own warm start), so it
 *   starts after that run finished. `troupe train spec.yaml --resume --no-final-eval` for the planned steps; then,
 *   while the measured generated samples (`rollout/samples` of metrics.jsonl) are below the budget by more than
 *   `tolerance`, top up: `troupe train --resume --steps <done + round(missing / measured mean per step)>`; then
 *   `troupe eval spec.yaml --checkpoint <run>` on the held-out split.
 * - swap: after the per-role run of the same game and seed, `troupe eval swap.yaml` (its policies exchanged between
 *   seats, loaded from the per-role run's newest checkpoint) and `troupe eval control.yaml` (the same policies on their
 *   own seats: must reproduce the per-role result, which checks the checkpoint loading).
 *
 * Every evaluation uses the spec's seed, so all arms of one seed see the same held-out instances.
 *
 * Scheduling: up to `jobs` runs at once; a run starts once the run it depends on (`ARMS[arm].dependsOn`, same game
 * and seed) has finished; when that run failed, the dependent is recorded as failed without running (its
 * failure.json names the source). A dependent's spec.yaml starts with a comment naming its source and the source's
 * plan digest, so its plan digest (and the folder check of a rerun) covers the source's plan. `runTimeout` kills a
 * run's child (SIGTERM, then SIGKILL after `killGrace`) once the run has taken that long, and records a failure.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { stringify } from 'yaml';
import { type TeamSpec, generatedSamples, lockFolder, readMetrics } from '@troupe/kernel';
import { NOT_RUN_YET, type RunResult, type RunSource } from './results.js';
import {
  ARMS,
  dependencyVerb,
  deriveArm,
  deriveSwapSpec,
  ExperimentError,
  type ArmName,
  type DerivedArm,
  type PlainSpec,
} from './arms.js';

/** One game of the experiment: a label and its base (per-role) team spec. */
export interface GameInput {
  /** Column label, e.g. `plan-path`. */
  readonly name: string;
  /** The base spec (the `mas-atgrpo-per-role` arm). */
  readonly spec: TeamSpec;
}

/** Options of {@link runExperiment}. */
export interface ExperimentOptions {
  /** Games (columns). */
  readonly games: readonly GameInput[];
  /** Arms (rows), in table order. */
  readonly arms: readonly ArmName[];
  /** Seeds per (game, arm): seed indices 0..seeds-1. */
  readonly seeds: number;
  /** Sample budget of every RL run (generated samples); default per game: base steps × base samples per step. */
  readonly budget?: number;
  /** Alternative to `budget`: the budget of this many steps of the per-role base arm. */
  readonly steps?: number;
  /** Held-out evaluation episodes per run; default: each base spec's `evaluation.episodes`. */
  readonly episodes?: number;
  /** Runs at once (child processes). Default 1. */
  readonly jobs?: number;
  /** Output folder. */
  readonly outDir: string;
  /** The command that starts the troupe CLI, e.g. `[node, '.../bin/troupe.js']` (arguments are appended). */
  readonly launcher: readonly string[];
  /** Working directory of the children. Default: the current one. */
  readonly cwd?: string;
  /** Environment of the children. Default: this process's. */
  readonly env?: NodeJS.ProcessEnv;
  /** The single-agent arms' seat. Default `executor`. */
  readonly singleSeat?: string;
  /** Stop topping up once generated samples are within this fraction below the budget. Default 0.05. */
  readonly tolerance?: number;
  /** Most top-up invocations per run. Default 4. */
  readonly maxTopUps?: number;
  /**
   * Most wall seconds of one run (all its children together); past it the running child is killed and the run is
   * recorded as failed (a rerun resumes it from its newest checkpoint). Default: no limit.
   */
  readonly runTimeout?: number;
  /** Seconds between SIGTERM and SIGKILL when a child is killed for `runTimeout`. Default 10. */
  readonly killGrace?: number;
  /** Progress observer. */
  readonly onEvent?: (event: ExperimentEvent) => void;
  /**
   * Stops the experiment when aborted (the CLI aborts on SIGINT, SIGTERM and SIGHUP): no further run starts, every
   * running child gets SIGTERM (SIGKILL `killGrace` seconds later), each stopped run is recorded as failed
   * (`interrupted: …`, a rerun resumes it from its newest checkpoint), and `runExperiment` rejects with an
   * {@link ExperimentInterrupted} once every child has exited. Without it a signal to the runner alone would leave its
   * children training as orphans.
   */
  readonly signal?: AbortSignal;
  /**
   * Finished runs of an earlier experiment to reuse (the `runs` of its results.json, e.g. a committed table's): a
   * planned run whose game, arm, seed and plan digest match one with status `ok` is not run again, and its result is
   * written to its run folder, so that a table can gain seeds after its run folders are gone. A run is reused only
   * with every run that starts from it or evaluates it (those need its checkpoints, which a results file does not
   * hold). A match in game, arm and seed with another digest is a different plan: run anew (a `reuse-mismatch` event).
   */
  readonly reuse?: { readonly file: string; readonly runs: readonly RunResult[] };
}

/** `runExperiment` was stopped through `options.signal`; `stopped` and `notStarted` count the runs it left undone. */
export class ExperimentInterrupted extends Error {
  constructor(
    readonly stopped: number,
    readonly notStarted: number,
    outDir: string,
  ) {
    super(
      `interrupted: ${stopped} running run${stopped === 1 ? '' : 's'} stopped (recorded in their failure.json), ` +
        `${notStarted} not started; the same command again resumes the experiment from the runs' newest checkpoints (${outDir})`,
    );
    this.name = 'ConfigError'; // user-facing: the CLI prints the message without a stack
  }
}

/** One planned run (game × arm × seed). */
export interface PlannedRun {
  /** Game label. */
  readonly game: string;
  /** Arm. */
  readonly arm: ArmName;
  /** Seed index. */
  readonly seed: number;
  /** Run folder (absolute). */
  readonly dir: string;
  /** The derived spec and budget. */
  readonly derived: DerivedArm;
  /**
   * The YAML of the generated spec (swap: of the per-role spec it derives from); for a run with a source, a first
   * comment line names the source run and its plan digest.
   */
  readonly specText: string;
  /** sha256 of `specText` plus the arm (so, for a dependent, of its source's plan too): a result is reused only for the same plan. */
  readonly digest: string;
  /** The run it depends on (`ARMS[arm].dependsOn`, same game and seed). */
  readonly source?: PlannedRun;
}

/** What the runner reports while it works. */
export type ExperimentEvent =
  | { readonly type: 'plan'; readonly runs: readonly PlannedRun[] }
  | { readonly type: 'cached'; readonly run: PlannedRun; readonly result: RunResult }
  | { readonly type: 'reuse-mismatch'; readonly run: PlannedRun; readonly file: string }
  | { readonly type: 'start'; readonly run: PlannedRun }
  | { readonly type: 'child'; readonly run: PlannedRun; readonly args: readonly string[] }
  | { readonly type: 'done'; readonly run: PlannedRun; readonly result: RunResult };

/** The experiment's results. */
export interface ExperimentResult {
  /** Every planned run's result (cached, new or failed), in plan order. */
  readonly runs: readonly RunResult[];
  /** The plan. */
  readonly plan: readonly PlannedRun[];
}

const RESULT = 'result.json';
const FAILURE = 'failure.json';

/** The run folder of (game, arm, seed) under the output folder. */
export function runDir(outDir: string, game: string, arm: ArmName, seed: number): string {
  return join(resolve(outDir), 'runs', game, arm, `seed-${seed}`);
}

/**
 * Derives every run's spec (pure; throws {@link ExperimentError} before anything runs when a base spec does not fit),
 * and checks that existing run folders hold the same plan.
 */
export function planExperiment(
  options: Pick<
    ExperimentOptions,
    'games' | 'arms' | 'seeds' | 'budget' | 'steps' | 'episodes' | 'outDir' | 'singleSeat'
  >,
): PlannedRun[] {
  if (!(Number.isInteger(options.seeds) && options.seeds >= 1))
    throw new ExperimentError(`seeds must be a positive integer, got ${options.seeds}`);
  if (options.budget !== undefined && options.steps !== undefined)
    throw new ExperimentError('give either a sample budget or a number of steps, not both');
  if (options.games.length === 0) throw new ExperimentError('no game given');
  if (options.arms.length === 0) throw new ExperimentError('no arm given');
  for (const a of options.arms) {
    const dep = ARMS[a].dependsOn;
    if (dep && !options.arms.includes(dep))
      throw new ExperimentError(
        `arm "${a}" ${dependencyVerb(a)} the "${dep}" run; add ${dep} to the arms (the CLI's --arms adds it)`,
      );
  }
  // Sources before their dependents (and all warm starts first, so that --jobs has the most runs to choose from).
  const depth = (a: ArmName): number => (ARMS[a].dependsOn ? depth(ARMS[a].dependsOn!) + 1 : 0);
  const order = [...options.arms].sort((a, b) => depth(a) - depth(b));
  const plan: PlannedRun[] = [];
  for (let seed = 0; seed < options.seeds; seed++) {
    for (const game of options.games) {
      let budget = options.budget;
      if (options.steps !== undefined) {
        const base = deriveArm(game.spec, 'mas-atgrpo-per-role', {
          seed,
          label: game.name,
          ...(options.singleSeat ? { singleSeat: options.singleSeat } : {}),
        });
        budget = options.steps * base.budget.samplesPerStep;
      }
      const mine = new Map<ArmName, PlannedRun>();
      for (const arm of order) {
        const derived = deriveArm(game.spec, arm, {
          seed,
          label: game.name,
          ...(budget !== undefined ? { budget } : {}),
          ...(options.episodes !== undefined ? { episodes: options.episodes } : {}),
          ...(options.singleSeat ? { singleSeat: options.singleSeat } : {}),
        });
        derived.spec.evaluation = { ...derived.spec.evaluation, split: 'test' };
        const dir = runDir(options.outDir, game.name, arm, seed);
        const dep = ARMS[arm].dependsOn;
        const source = dep ? mine.get(dep)! : undefined;
        const header = source
          ? `# ${ARMS[arm].uses === 'warm-start' ? `starts from the warm start (${derived.source!.checkpoint}) of` : 'evaluates the newest checkpoint of'} ` +
            `${relative(dir, source.dir)}, plan ${source.digest}\n`
          : '';
        const specText = header + stringify(derived.spec);
        const digest = createHash('sha256').update(`${arm}\n${specText}`).digest('hex').slice(0, 16);
        const run: PlannedRun = {
          game: game.name,
          arm,
          seed,
          dir,
          derived,
          specText,
          digest,
          ...(source ? { source } : {}),
        };
        checkFolder(run);
        mine.set(arm, run);
      }
      plan.push(...mine.values());
    }
  }
  // Stable: by depth, then seed, game and table order.
  return plan
    .map((run, i) => ({ run, i }))
    .sort((a, b) => depth(a.run.arm) - depth(b.run.arm) || a.i - b.i)
    .map((x) => x.run);
}

/** An existing run folder must hold the same plan (same generated spec), or nothing. */
function checkFolder(run: PlannedRun): void {
  const file = join(run.dir, run.arm === 'swap' ? 'per-role.yaml' : 'spec.yaml');
  if (existsSync(file) && readFileSync(file, 'utf8') !== run.specText) {
    throw new ExperimentError(
      `${run.dir} holds a run of a different plan (its ${file.split('/').pop()} differs from the one this experiment generates: the budget, episodes, base spec or the plan of the run it starts from changed); choose another --out or delete that folder`,
    );
  }
}

/** Reads a run's result.json when it exists and belongs to this plan. */
function cachedResult(run: PlannedRun): RunResult | undefined {
  const file = join(run.dir, RESULT);
  if (!existsSync(file)) return undefined;
  try {
    const r = JSON.parse(readFileSync(file, 'utf8')) as RunResult;
    return r.status === 'ok' && r.digest === run.digest ? r : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The planned runs that `reuse` holds finished (same game, arm, seed and digest), each with its result: only those
 * whose dependents are reused too. Emits `reuse-mismatch` for a run the file holds under another plan.
 */
function reusableRuns(
  plan: readonly PlannedRun[],
  reuse: ExperimentOptions['reuse'],
  emit: (e: ExperimentEvent) => void,
): Map<PlannedRun, RunResult> {
  const found = new Map<PlannedRun, RunResult>();
  if (!reuse) return found;
  for (const run of plan) {
    const same = reuse.runs.filter(
      (r) => r.game === run.game && r.arm === run.arm && r.seed === run.seed && r.status === 'ok',
    );
    const hit = same.find((r) => r.digest === run.digest);
    if (hit) found.set(run, hit);
    else if (same.length > 0) emit({ type: 'reuse-mismatch', run, file: reuse.file });
  }
  for (let dropped = true; dropped;) {
    dropped = false;
    for (const run of found.keys()) {
      if (plan.some((d) => d.source === run && !found.has(d))) {
        found.delete(run);
        dropped = true;
      }
    }
  }
  return found;
}

/** The newest complete step checkpoint of a run folder (`checkpoints/step-N` with its trainer-state.json). */
export function newestCheckpoint(dir: string): string | undefined {
  const base = join(dir, 'checkpoints');
  if (!existsSync(base)) return undefined;
  const steps = readdirSync(base)
    .map((e) => /^step-(\d+)$/.exec(e))
    .filter((m): m is RegExpExecArray => m !== null && existsSync(join(base, m[0], 'trainer-state.json')))
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
  return steps.length ? join(base, `step-${steps.at(-1)}`) : undefined;
}

/** Sample accounting of a run folder from its metrics.jsonl. */
export function measureRun(dir: string): {
  generated: number;
  trained: number;
  steps: number;
  lastStep: number;
  warmStartSamples?: number;
} {
  const metrics = readMetrics(dir);
  const train = metrics.filter((m) => m.kind === 'train');
  const generated = generatedSamples(train);
  let trained = 0;
  for (const m of train) {
    for (const [k, v] of Object.entries(m)) {
      const policy = /^loss\/([^/]+)\/samples$/.exec(k)?.[1];
      if (policy === undefined || typeof v !== 'number') continue;
      const withSignal = m[`loss/${policy}/trained_samples`];
      trained += typeof withSignal === 'number' ? withSignal : v;
    }
  }
  const warm = metrics.find((m) => m.kind === 'warm-start');
  const ws = warm?.['warmstart/samples'];
  return {
    generated,
    trained,
    steps: train.length,
    lastStep: train.reduce((a, m) => Math.max(a, m.step), 0),
    ...(typeof ws === 'number' ? { warmStartSamples: ws } : {}),
  };
}

/**
 * The most steps to resume a run to so that its generated samples reach the budget, or undefined when they are
 * within `tolerance` below it (or above): done + twice the steps the measured mean per step needs (at least one). The
 * trainer itself stops at the budget (`troupe train --sample-budget`), so the margin costs nothing; it covers steps
 * that grow longer than the mean (a policy that breaks plays longer episodes).
 */
export function topUpSteps(
  measured: { generated: number; steps: number; lastStep: number },
  budget: number,
  tolerance: number,
): number | undefined {
  if (measured.generated >= budget * (1 - tolerance) || measured.steps === 0) return undefined;
  const mean = measured.generated / measured.steps;
  const extra = mean > 0 ? Math.max(1, Math.ceil((2 * (budget - measured.generated)) / mean)) : 1;
  return measured.lastStep + extra;
}

/** How the error of a run stopped through `options.signal` begins. */
const INTERRUPTED = 'interrupted:';

/** A child process that failed: its command and the tail of its output. */
class ChildError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChildError';
  }
}

/** The time a run has used and the wall-clock deadline of its `runTimeout`. */
interface RunClock {
  seconds: number;
  /** `performance.now()` past which the run's child is killed; undefined: no limit. */
  readonly deadline?: number;
  /** The limit in seconds (for the message). */
  readonly limit?: number;
}

/**
 * Runs the plan: every run once (cached results reused), `jobs` at a time; a run starts only once the run it depends
 * on has finished, and is recorded as failed without running when that run failed.
 */
export async function runExperiment(options: ExperimentOptions): Promise<ExperimentResult> {
  if (options.runTimeout !== undefined && !(options.runTimeout > 0))
    throw new ExperimentError(`the run timeout must be a positive number of seconds, got ${options.runTimeout}`);
  const plan = planExperiment(options);
  const emit = (e: ExperimentEvent): void => options.onEvent?.(e);
  emit({ type: 'plan', runs: plan });
  const out = resolve(options.outDir);
  const lock = lockFolder(out, 'troupe experiment'); // one runner per experiment folder
  try {
    return await runPlan(plan, out, options, emit);
  } finally {
    lock.release();
  }
}

/** A result taken from a results file: marked with where it came from (the first file, when reused again). */
function asReused(earlier: RunResult, file: string): RunResult {
  return { ...earlier, reusedFrom: earlier.reusedFrom ?? file };
}

/**
 * The results of the plan as they stand, running nothing and writing nothing: each run's result.json (or the run
 * `options.reuse` holds), else its failure.json, else a failed result `not run yet`. For the table of a long
 * experiment so far, or of one stopped before its end (`troupe experiment paper-table --report-only`).
 */
export function collectResults(
  options: Pick<
    ExperimentOptions,
    'games' | 'arms' | 'seeds' | 'budget' | 'steps' | 'episodes' | 'outDir' | 'singleSeat' | 'reuse'
  >,
): ExperimentResult {
  const plan = planExperiment(options);
  const out = resolve(options.outDir);
  const reusable = reusableRuns(plan, options.reuse, () => {});
  const runs = plan.map((run): RunResult => {
    const cached = cachedResult(run);
    if (cached) return cached;
    const earlier = reusable.get(run);
    if (earlier) return asReused(earlier, options.reuse!.file);
    const failure = join(run.dir, FAILURE);
    if (existsSync(failure)) {
      try {
        return JSON.parse(readFileSync(failure, 'utf8')) as RunResult;
      } catch {
        return baseResult(run, out, 0, 'failed', `unreadable ${failure}`);
      }
    }
    return baseResult(run, out, 0, 'failed', NOT_RUN_YET);
  });
  return { runs, plan };
}

/** Runs the planned runs (up to `jobs` at once, each after its source), reusing the results of finished ones. */
async function runPlan(
  plan: PlannedRun[],
  out: string,
  options: ExperimentOptions,
  emit: (e: ExperimentEvent) => void,
): Promise<ExperimentResult> {
  const results = new Map<PlannedRun, RunResult>();
  const reusable = reusableRuns(plan, options.reuse, emit);

  const execute = async (run: PlannedRun): Promise<RunResult> => {
    const cached = cachedResult(run);
    if (cached) {
      emit({ type: 'cached', run, result: cached });
      return cached;
    }
    const earlier = reusable.get(run);
    if (earlier) {
      const reused = asReused(earlier, options.reuse!.file);
      mkdirSync(run.dir, { recursive: true });
      writeFileSync(join(run.dir, RESULT), JSON.stringify(reused, null, 2) + '\n');
      emit({ type: 'cached', run, result: reused });
      return reused;
    }
    const source = run.source ? results.get(run.source) : undefined;
    let result: RunResult;
    if (source && source.status !== 'ok') {
      // Not run: what it needs failed. Recorded like a failure, so that a rerun retries it after its source.
      mkdirSync(run.dir, { recursive: true });
      const first = (source.error ?? '').split('\n')[0];
      const verb = ARMS[run.arm].uses === 'warm-start' ? 'starts from' : 'evaluates';
      result = baseResult(
        run,
        out,
        0,
        'failed',
        `not run: the ${source.arm} run it ${verb} (seed ${source.seed}, ${join(out, source.dir)}) failed: ${first}`,
      );
      writeFileSync(join(run.dir, FAILURE), JSON.stringify(result, null, 2) + '\n');
      emit({ type: 'done', run, result });
      return result;
    }
    emit({ type: 'start', run });
    mkdirSync(run.dir, { recursive: true });
    rmSync(join(run.dir, FAILURE), { force: true });
    const clock: RunClock =
      options.runTimeout !== undefined
        ? { seconds: 0, deadline: performance.now() + options.runTimeout * 1000, limit: options.runTimeout }
        : { seconds: 0 };
    try {
      if (run.arm === 'swap') {
        result = await runSwap(run, source!, out, options, clock, emit);
      } else {
        result = await runArm(run, out, options, clock, emit);
      }
      writeFileSync(join(run.dir, RESULT), JSON.stringify(result, null, 2) + '\n');
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      result = baseResult(run, out, clock.seconds, 'failed', message);
      writeFileSync(join(run.dir, FAILURE), JSON.stringify(result, null, 2) + '\n');
    }
    emit({ type: 'done', run, result });
    return result;
  };

  // A small scheduler: while fewer than `jobs` run, start the first queued run whose source has finished.
  const queue = [...plan];
  const jobs = Math.max(1, Math.min(options.jobs ?? 1, plan.length));
  const running = new Set<Promise<void>>();
  const stopped = new Set<PlannedRun>();
  for (;;) {
    while (running.size < jobs && !options.signal?.aborted) {
      const i = queue.findIndex((r) => !r.source || results.has(r.source));
      if (i < 0) break;
      const run = queue.splice(i, 1)[0]!;
      const p: Promise<void> = execute(run).then((r) => {
        results.set(run, r);
        if (options.signal?.aborted && r.error?.startsWith(INTERRUPTED)) stopped.add(run);
        running.delete(p);
      });
      running.add(p);
    }
    if (running.size === 0) break;
    await Promise.race(running);
  }
  if (options.signal?.aborted) throw new ExperimentInterrupted(stopped.size, queue.length, out);
  // planExperiment plans every source, before its dependents: nothing can be left.
  if (queue.length > 0) throw new Error(`experiment runner: ${queue.length} runs never became ready`);
  return { runs: plan.map((run) => results.get(run)!), plan };
}

/**
 * The children's environment: `options.env` (default: this process's), plus `TROUPE_WORKERS` = the cores per run
 * (available parallelism / jobs, at least 1) unless it is already set, so that `jobs` trainings side by side do not
 * each start a worker thread per core (their results do not depend on it).
 */
export function childEnv(
  options: Pick<ExperimentOptions, 'env' | 'jobs'>,
  cores = availableParallelism(),
): NodeJS.ProcessEnv {
  const env = options.env ?? process.env;
  if (env.TROUPE_WORKERS !== undefined && env.TROUPE_WORKERS !== '') return env;
  return { ...env, TROUPE_WORKERS: String(Math.max(1, Math.floor(cores / Math.max(1, options.jobs ?? 1)))) };
}

function baseResult(run: PlannedRun, out: string, seconds: number, status: 'ok' | 'failed', error?: string): RunResult {
  const b = run.derived.budget;
  const info = ARMS[run.arm];
  const source: RunSource | undefined = run.source
    ? {
        arm: run.source.arm,
        uses: info.uses ?? 'final',
        dir: relative(out, run.source.dir),
        ...(run.derived.source ? { checkpoint: relative(out, resolve(run.dir, run.derived.source.checkpoint)) } : {}),
      }
    : undefined;
  return {
    game: run.game,
    arm: run.arm,
    seed: run.seed,
    specSeed: run.derived.spec.seed,
    status,
    level: run.derived.level,
    algorithm: info.algorithm,
    samples: {
      budget: b.budget,
      generated: 0,
      trained: 0,
      steps: 0,
      plannedSteps: b.steps,
      batchSize: b.batchSize,
      branches: b.branches,
      samplesPerStep: b.samplesPerStep,
      topUps: 0,
    },
    ...(source ? { source } : {}),
    seconds,
    dir: relative(out, run.dir),
    digest: run.digest,
    ...(error !== undefined ? { error } : {}),
  };
}

/**
 * Runs `troupe <args>` as a child; stdout is returned, everything goes to the run's troupe.log. Past the run's
 * deadline the child gets SIGTERM, and SIGKILL `killGrace` seconds later; the promise then rejects with the timeout.
 */
function troupe(
  run: PlannedRun,
  args: readonly string[],
  options: ExperimentOptions,
  clock: RunClock,
  emit: (e: ExperimentEvent) => void,
): Promise<string> {
  emit({ type: 'child', run, args });
  const log = join(run.dir, 'troupe.log');
  appendFileSync(log, `\n$ troupe ${args.join(' ')}\n`);
  const started = performance.now();
  const timedOut = (): string =>
    `timed out: the run took more than ${clock.limit} s (--run-timeout ${clock.limit}); ` +
    `troupe ${args[0]} was killed. A rerun resumes it from its newest checkpoint. (full log: ${log})`;
  const interrupted = (): string =>
    `${INTERRUPTED} the experiment was stopped; troupe ${args[0]} was killed. A rerun resumes it ` +
    `from its newest checkpoint. (full log: ${log})`;
  return new Promise((resolvePromise, reject) => {
    const [cmd, ...pre] = options.launcher;
    if (!cmd) {
      reject(new ChildError('no launcher command for the troupe CLI'));
      return;
    }
    if (options.signal?.aborted) {
      appendFileSync(log, '(not started: the experiment was stopped)\n');
      reject(new ChildError(interrupted()));
      return;
    }
    if (clock.deadline !== undefined && performance.now() >= clock.deadline) {
      appendFileSync(log, `(not started: the run timeout of ${clock.limit} s has passed)\n`);
      reject(new ChildError(timedOut()));
      return;
    }
    const child = spawn(cmd, [...pre, ...args], {
      cwd: options.cwd ?? process.cwd(),
      env: childEnv(options),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderrTail = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      appendFileSync(log, d);
    });
    child.stderr.on('data', (d: Buffer) => {
      stderrTail = (stderrTail + d.toString()).slice(-4000);
      appendFileSync(log, d);
    });
    let killed: 'timeout' | 'interrupt' | undefined;
    let termTimer: NodeJS.Timeout | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    /** SIGTERM now, SIGKILL `killGrace` seconds later if it is still running. */
    const kill = (why: 'timeout' | 'interrupt', note: string): void => {
      if (killed) return;
      killed = why;
      clearTimeout(termTimer);
      appendFileSync(log, `\n(${note}: SIGTERM to troupe ${args[0]})\n`);
      child.kill('SIGTERM');
      killTimer = setTimeout(
        () => {
          appendFileSync(log, `(still running ${options.killGrace ?? 10} s after SIGTERM: SIGKILL)\n`);
          child.kill('SIGKILL');
        },
        (options.killGrace ?? 10) * 1000,
      );
    };
    if (clock.deadline !== undefined) {
      termTimer = setTimeout(
        () => kill('timeout', `run timeout of ${clock.limit} s`),
        Math.max(0, clock.deadline - performance.now()),
      );
    }
    const onAbort = (): void => kill('interrupt', 'the experiment was stopped');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const settle = (): void => {
      clearTimeout(termTimer);
      clearTimeout(killTimer);
      options.signal?.removeEventListener('abort', onAbort);
    };
    child.on('error', (err) => {
      settle();
      reject(new ChildError(`cannot start the troupe CLI (${options.launcher.join(' ')}): ${err.message}`));
    });
    child.on('close', (code, signal) => {
      settle();
      clock.seconds += (performance.now() - started) / 1000;
      if (killed) {
        reject(new ChildError(killed === 'timeout' ? timedOut() : interrupted()));
        return;
      }
      if (code === 0) {
        resolvePromise(stdout);
        return;
      }
      const tail = stderrTail.trim().split('\n').slice(-12).join('\n');
      reject(
        new ChildError(
          `troupe ${args[0]} exited with ${code ?? signal}${tail ? `:\n${tail}` : ''}\n(full log: ${log})`,
        ),
      );
    });
  });
}

function parseJson(text: string, what: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new ChildError(`${what}: the CLI's --json output is not JSON: ${text.slice(0, 400)}`);
  }
}

type EvalSummary = NonNullable<RunResult['eval']>;

/** The evaluation of `troupe train --json` (final_eval) or `troupe eval --json`. */
function evalOf(doc: Record<string, unknown>, what: string): EvalSummary {
  const fe = doc.final_eval as Record<string, unknown> | null | undefined;
  const src = fe ?? doc;
  const rate = (fe ? fe.successRate : doc.success_rate) as unknown;
  const { split, episodes, successes, ci95 } = src as {
    split?: unknown;
    episodes?: unknown;
    successes?: unknown;
    ci95?: unknown;
  };
  if (
    typeof rate !== 'number' ||
    typeof episodes !== 'number' ||
    typeof successes !== 'number' ||
    !Array.isArray(ci95)
  ) {
    throw new ChildError(`${what}: no evaluation in the CLI's output`);
  }
  return { split: String(split), episodes, successes, successRate: rate, ci95: [Number(ci95[0]), Number(ci95[1])] };
}

async function runArm(
  run: PlannedRun,
  out: string,
  options: ExperimentOptions,
  clock: RunClock,
  emit: (e: ExperimentEvent) => void,
): Promise<RunResult> {
  const specFile = join(run.dir, 'spec.yaml');
  writeFileSync(specFile, run.specText);
  if (run.derived.source && run.source) checkSourceCheckpoint(run, run.source);
  const info = ARMS[run.arm];
  const b = run.derived.budget;
  const spec = run.derived.spec;
  const common = ['--out', run.dir, '--resume', '--json', '--no-progress'];
  let evaluation: EvalSummary;
  let topUps = 0;
  if (!info.rl) {
    const doc = parseJson(
      await troupe(run, ['train', specFile, ...common], options, clock, emit),
      `${run.dir}: troupe train`,
    );
    evaluation = evalOf(doc, `${run.dir}: troupe train`);
  } else {
    // Every call stops at the budget (at most one step's samples past it): equal budgets, whatever the episode lengths.
    const budget = ['--sample-budget', String(b.budget)];
    await troupe(run, ['train', specFile, ...common, ...budget, '--no-final-eval'], options, clock, emit);
    const tolerance = options.tolerance ?? 0.05;
    for (;;) {
      const m = measureRun(run.dir);
      const next = topUpSteps(m, b.budget, tolerance);
      if (next === undefined || topUps >= (options.maxTopUps ?? 4)) break;
      topUps++;
      await troupe(
        run,
        ['train', specFile, ...common, ...budget, '--no-final-eval', '--steps', String(next)],
        options,
        clock,
        emit,
      );
    }
    const doc = parseJson(
      await troupe(
        run,
        [
          'eval',
          specFile,
          '--checkpoint',
          run.dir,
          '--split',
          spec.evaluation.split,
          '-n',
          String(spec.evaluation.episodes),
          '--concurrency',
          String(spec.algorithm.concurrency),
          '--json',
        ],
        options,
        clock,
        emit,
      ),
      `${run.dir}: troupe eval`,
    );
    evaluation = evalOf(doc, `${run.dir}: troupe eval`);
  }
  const m = measureRun(run.dir);
  const base = baseResult(run, out, clock.seconds, 'ok');
  return {
    ...base,
    eval: evaluation,
    samples: { ...base.samples, generated: m.generated, trained: m.trained, steps: m.steps, topUps },
    ...(m.warmStartSamples !== undefined ? { warmStartSamples: m.warmStartSamples } : {}),
  };
}

/** The policy folders a warm-start dependent loads must exist (its source finished, so they should). */
function checkSourceCheckpoint(run: PlannedRun, source: PlannedRun): void {
  for (const [name, entry] of Object.entries(run.derived.spec.policies)) {
    const p = entry as Record<string, unknown>;
    const dir = typeof p.adapter === 'string' ? p.adapter : typeof p.model === 'string' ? p.model : undefined;
    if (dir === undefined) continue;
    const abs = resolve(run.dir, dir);
    if (!existsSync(abs)) {
      throw new ExperimentError(
        `the warm start of policy '${name}' is missing: ${abs} (the ${source.arm} run ${source.dir} finished without it, or it was deleted); delete ${join(source.dir, RESULT)} so that a rerun redoes that warm start`,
      );
    }
  }
}

async function runSwap(
  run: PlannedRun,
  perRole: RunResult,
  out: string,
  options: ExperimentOptions,
  clock: RunClock,
  emit: (e: ExperimentEvent) => void,
): Promise<RunResult> {
  writeFileSync(join(run.dir, 'per-role.yaml'), run.specText);
  if (perRole.status !== 'ok')
    throw new ExperimentError(
      `the per-role run it evaluates failed (${join(out, perRole.dir)}): ${perRole.error ?? ''}`.trim(),
    );
  const perRoleDir = join(out, perRole.dir);
  const checkpoint = newestCheckpoint(perRoleDir);
  if (!checkpoint)
    throw new ExperimentError(
      `the per-role run ${perRoleDir} has no complete checkpoint (checkpoints/step-N/trainer-state.json)`,
    );
  const rel = relative(run.dir, checkpoint);
  const spec = run.derived.spec as PlainSpec;
  const evalArgs = (file: string): string[] => [
    'eval',
    file,
    '--split',
    spec.evaluation.split,
    '-n',
    String(spec.evaluation.episodes),
    '--concurrency',
    String(spec.algorithm.concurrency),
    '--json',
  ];
  const swapFile = join(run.dir, 'swap.yaml');
  const controlFile = join(run.dir, 'control.yaml');
  writeFileSync(swapFile, stringify(deriveSwapSpec(spec, rel)));
  writeFileSync(controlFile, stringify(deriveSwapSpec(spec, rel, { exchange: false })));
  const swapped = evalOf(
    parseJson(await troupe(run, evalArgs(swapFile), options, clock, emit), `${swapFile}: troupe eval`),
    `${swapFile}: troupe eval`,
  );
  const control = evalOf(
    parseJson(await troupe(run, evalArgs(controlFile), options, clock, emit), `${controlFile}: troupe eval`),
    `${controlFile}: troupe eval`,
  );
  const base = baseResult(run, out, clock.seconds, 'ok');
  return {
    ...base,
    level: run.derived.level,
    algorithm: 'none',
    eval: swapped,
    ...(base.source ? { source: { ...base.source, checkpoint: relative(out, checkpoint) } } : {}),
    control: { episodes: control.episodes, successes: control.successes, successRate: control.successRate },
  };
}
