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
 * - RL arm: `troupe train spec.yaml --resume --no-final-eval` for the planned steps; then, while the measured
 *   generated samples (`rollout/samples` of metrics.jsonl) are below the budget by more than `tolerance`, top up:
 *   `troupe train --resume --steps <done + round(missing / measured mean per step)>`; then
 *   `troupe eval spec.yaml --checkpoint <run>` on the held-out split.
 * - swap: after the per-role run of the same game and seed, `troupe eval swap.yaml` (its policies exchanged between
 *   seats, loaded from the per-role run's newest checkpoint) and `troupe eval control.yaml` (the same policies on their
 *   own seats: must reproduce the per-role result, which checks the checkpoint loading).
 *
 * Every evaluation uses the spec's seed, so all arms of one seed see the same held-out instances.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { stringify } from 'yaml';
import type { TeamSpec } from '../team/types.js';
import { readMetrics } from '../trainer/report.js';
import { ARMS, deriveArm, deriveSwapSpec, ExperimentError, type ArmLevel, type ArmName, type DerivedArm, type PlainSpec } from './arms.js';

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
  /** Progress observer. */
  readonly onEvent?: (event: ExperimentEvent) => void;
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
  /** The YAML of the generated spec (swap: of the per-role spec it derives from). */
  readonly specText: string;
  /** sha256 of `specText` plus the arm: a result is reused only for the same plan. */
  readonly digest: string;
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
  readonly eval?: { readonly split: string; readonly episodes: number; readonly successes: number; readonly successRate: number; readonly ci95: readonly [number, number] };
  /** Swap only: the per-role policies on their own seats, loaded the same way (must match the per-role result). */
  readonly control?: { readonly episodes: number; readonly successes: number; readonly successRate: number };
  /** Sample accounting of RL arms (zeros for the others). */
  readonly samples: {
    /** The budget the run was topped up to. */
    readonly budget: number;
    /** Generated RL samples (sum of `rollout/samples`). */
    readonly generated: number;
    /** Samples trained on (sum of `loss/<policy>/samples`; grpo-naive trains on last-turn samples only). */
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
  /** Warm-start demonstration samples (from metrics.jsonl), when the run had a warm start. */
  readonly warmStartSamples?: number;
  /** Wall seconds of this run's child processes. */
  readonly seconds: number;
  /** Run folder, relative to the experiment's output folder. */
  readonly dir: string;
  /** Plan digest (see {@link PlannedRun.digest}). */
  readonly digest: string;
  /** Failure message (status `failed`). */
  readonly error?: string;
}

/** What the runner reports while it works. */
export type ExperimentEvent =
  | { readonly type: 'plan'; readonly runs: readonly PlannedRun[] }
  | { readonly type: 'cached'; readonly run: PlannedRun; readonly result: RunResult }
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
export function planExperiment(options: Pick<ExperimentOptions, 'games' | 'arms' | 'seeds' | 'budget' | 'steps' | 'episodes' | 'outDir' | 'singleSeat'>): PlannedRun[] {
  if (!(Number.isInteger(options.seeds) && options.seeds >= 1)) throw new ExperimentError(`seeds must be a positive integer, got ${options.seeds}`);
  if (options.budget !== undefined && options.steps !== undefined) throw new ExperimentError('give either a sample budget or a number of steps, not both');
  if (options.games.length === 0) throw new ExperimentError('no game given');
  if (options.arms.length === 0) throw new ExperimentError('no arm given');
  for (const a of options.arms) {
    const dep = ARMS[a].dependsOn;
    if (dep && !options.arms.includes(dep)) throw new ExperimentError(`arm "${a}" evaluates the policies of the "${dep}" run; add ${dep} to the arms`);
  }
  const plan: PlannedRun[] = [];
  const later: PlannedRun[] = [];
  for (let seed = 0; seed < options.seeds; seed++) {
    for (const game of options.games) {
      let budget = options.budget;
      if (options.steps !== undefined) {
        const base = deriveArm(game.spec, 'mas-atgrpo-per-role', { seed, label: game.name, ...(options.singleSeat ? { singleSeat: options.singleSeat } : {}) });
        budget = options.steps * base.budget.samplesPerStep;
      }
      for (const arm of options.arms) {
        const derived = deriveArm(game.spec, arm, {
          seed, label: game.name,
          ...(budget !== undefined ? { budget } : {}),
          ...(options.episodes !== undefined ? { episodes: options.episodes } : {}),
          ...(options.singleSeat ? { singleSeat: options.singleSeat } : {}),
        });
        derived.spec.evaluation = { ...derived.spec.evaluation, split: 'test' };
        const specText = stringify(derived.spec);
        const digest = createHash('sha256').update(`${arm}\n${specText}`).digest('hex').slice(0, 16);
        const dir = runDir(options.outDir, game.name, arm, seed);
        const run: PlannedRun = { game: game.name, arm, seed, dir, derived, specText, digest };
        checkFolder(run);
        (ARMS[arm].evalOnly ? later : plan).push(run);
      }
    }
  }
  return [...plan, ...later];
}

/** An existing run folder must hold the same plan (same generated spec), or nothing. */
function checkFolder(run: PlannedRun): void {
  const file = join(run.dir, run.arm === 'swap' ? 'per-role.yaml' : 'spec.yaml');
  if (existsSync(file) && readFileSync(file, 'utf8') !== run.specText) {
    throw new ExperimentError(`${run.dir} holds a run of a different plan (its ${file.split('/').pop()} differs from the one this experiment generates: the budget, episodes or base spec changed); choose another --out or delete that folder`);
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
export function measureRun(dir: string): { generated: number; trained: number; steps: number; lastStep: number; warmStartSamples?: number } {
  const metrics = readMetrics(dir);
  const train = metrics.filter((m) => m.kind === 'train');
  let generated = 0, trained = 0;
  for (const m of train) {
    if (typeof m['rollout/samples'] === 'number') generated += m['rollout/samples'];
    for (const [k, v] of Object.entries(m)) if (/^loss\/[^/]+\/samples$/.test(k) && typeof v === 'number') trained += v;
  }
  const warm = metrics.find((m) => m.kind === 'warm-start');
  const ws = warm?.['warmstart/samples'];
  return { generated, trained, steps: train.length, lastStep: train.reduce((a, m) => Math.max(a, m.step), 0), ...(typeof ws === 'number' ? { warmStartSamples: ws } : {}) };
}

/**
 * The total steps to resume a run to so that its generated samples reach the budget, or undefined when they are
 * within `tolerance` below it (or above): done + round(missing / measured mean per step), at least one more step.
 */
export function topUpSteps(measured: { generated: number; steps: number; lastStep: number }, budget: number, tolerance: number): number | undefined {
  if (measured.generated >= budget * (1 - tolerance) || measured.steps === 0) return undefined;
  const mean = measured.generated / measured.steps;
  const extra = mean > 0 ? Math.max(1, Math.round((budget - measured.generated) / mean)) : 1;
  return measured.lastStep + extra;
}

/** A child process that failed: its command and the tail of its output. */
class ChildError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChildError';
  }
}

/** Runs the plan: every run once (cached results reused), `jobs` at a time; swap runs after their per-role run. */
export async function runExperiment(options: ExperimentOptions): Promise<ExperimentResult> {
  const plan = planExperiment(options);
  const emit = (e: ExperimentEvent): void => options.onEvent?.(e);
  emit({ type: 'plan', runs: plan });
  const out = resolve(options.outDir);
  mkdirSync(out, { recursive: true });

  const key = (game: string, arm: string, seed: number): string => `${game}\u0000${arm}\u0000${seed}`;
  const settled = new Map<string, { promise: Promise<RunResult>; resolve: (r: RunResult) => void }>();
  for (const run of plan) {
    let res!: (r: RunResult) => void;
    const promise = new Promise<RunResult>((r) => (res = r));
    settled.set(key(run.game, run.arm, run.seed), { promise, resolve: res });
  }

  const execute = async (run: PlannedRun): Promise<RunResult> => {
    const cached = cachedResult(run);
    if (cached) {
      emit({ type: 'cached', run, result: cached });
      return cached;
    }
    emit({ type: 'start', run });
    mkdirSync(run.dir, { recursive: true });
    rmSync(join(run.dir, FAILURE), { force: true });
    const clock = { seconds: 0 };
    let result: RunResult;
    try {
      if (run.arm === 'swap') {
        const perRole = await settled.get(key(run.game, 'mas-atgrpo-per-role', run.seed))!.promise;
        result = await runSwap(run, perRole, out, options, clock, emit);
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

  const queue = [...plan];
  const jobs = Math.max(1, Math.min(options.jobs ?? 1, plan.length));
  await Promise.all(Array.from({ length: jobs }, async () => {
    for (let run = queue.shift(); run; run = queue.shift()) {
      const r = await execute(run);
      settled.get(key(run.game, run.arm, run.seed))!.resolve(r);
    }
  }));
  const runs = await Promise.all(plan.map((run) => settled.get(key(run.game, run.arm, run.seed))!.promise));
  return { runs, plan };
}

function baseResult(run: PlannedRun, out: string, seconds: number, status: 'ok' | 'failed', error?: string): RunResult {
  const b = run.derived.budget;
  return {
    game: run.game, arm: run.arm, seed: run.seed, specSeed: run.derived.spec.seed, status, level: run.derived.level,
    algorithm: ARMS[run.arm].algorithm,
    samples: { budget: b.budget, generated: 0, trained: 0, steps: 0, plannedSteps: b.steps, batchSize: b.batchSize, branches: b.branches, samplesPerStep: b.samplesPerStep, topUps: 0 },
    seconds, dir: relative(out, run.dir), digest: run.digest, ...(error !== undefined ? { error } : {}),
  };
}

/** Runs `troupe <args>` as a child; stdout is returned, everything goes to the run's troupe.log. */
function troupe(run: PlannedRun, args: readonly string[], options: ExperimentOptions, clock: { seconds: number }, emit: (e: ExperimentEvent) => void): Promise<string> {
  emit({ type: 'child', run, args });
  const log = join(run.dir, 'troupe.log');
  appendFileSync(log, `\n$ troupe ${args.join(' ')}\n`);
  const started = performance.now();
  return new Promise((resolvePromise, reject) => {
    const [cmd, ...pre] = options.launcher;
    if (!cmd) {
      reject(new ChildError('no launcher command for the troupe CLI'));
      return;
    }
    const child = spawn(cmd, [...pre, ...args], { cwd: options.cwd ?? process.cwd(), env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
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
    child.on('error', (err) => reject(new ChildError(`cannot start the troupe CLI (${options.launcher.join(' ')}): ${err.message}`)));
    child.on('close', (code, signal) => {
      clock.seconds += (performance.now() - started) / 1000;
      if (code === 0) {
        resolvePromise(stdout);
        return;
      }
      const tail = stderrTail.trim().split('\n').slice(-12).join('\n');
      reject(new ChildError(`troupe ${args[0]} exited with ${code ?? signal}${tail ? `:\n${tail}` : ''}\n(full log: ${log})`));
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
  const { split, episodes, successes, ci95 } = src as { split?: unknown; episodes?: unknown; successes?: unknown; ci95?: unknown };
  if (typeof rate !== 'number' || typeof episodes !== 'number' || typeof successes !== 'number' || !Array.isArray(ci95)) {
    throw new ChildError(`${what}: no evaluation in the CLI's output`);
  }
  return { split: String(split), episodes, successes, successRate: rate, ci95: [Number(ci95[0]), Number(ci95[1])] };
}

async function runArm(run: PlannedRun, out: string, options: ExperimentOptions, clock: { seconds: number }, emit: (e: ExperimentEvent) => void): Promise<RunResult> {
  const specFile = join(run.dir, 'spec.yaml');
  writeFileSync(specFile, run.specText);
  const info = ARMS[run.arm];
  const b = run.derived.budget;
  const spec = run.derived.spec;
  const common = ['--out', run.dir, '--resume', '--json', '--no-progress'];
  let evaluation: EvalSummary;
  let topUps = 0;
  if (!info.rl) {
    const doc = parseJson(await troupe(run, ['train', specFile, ...common], options, clock, emit), `${run.dir}: troupe train`);
    evaluation = evalOf(doc, `${run.dir}: troupe train`);
  } else {
    await troupe(run, ['train', specFile, ...common, '--no-final-eval'], options, clock, emit);
    const tolerance = options.tolerance ?? 0.05;
    for (;;) {
      const m = measureRun(run.dir);
      const next = topUpSteps(m, b.budget, tolerance);
      if (next === undefined || topUps >= (options.maxTopUps ?? 4)) break;
      topUps++;
      await troupe(run, ['train', specFile, ...common, '--no-final-eval', '--steps', String(next)], options, clock, emit);
    }
    const doc = parseJson(await troupe(run, [
      'eval', specFile, '--checkpoint', run.dir, '--split', spec.evaluation.split, '-n', String(spec.evaluation.episodes),
      '--concurrency', String(spec.algorithm.concurrency), '--json',
    ], options, clock, emit), `${run.dir}: troupe eval`);
    evaluation = evalOf(doc, `${run.dir}: troupe eval`);
  }
  const m = measureRun(run.dir);
  const base = baseResult(run, out, clock.seconds, 'ok');
  return {
    ...base, eval: evaluation,
    samples: { ...base.samples, generated: m.generated, trained: m.trained, steps: m.steps, topUps },
    ...(m.warmStartSamples !== undefined ? { warmStartSamples: m.warmStartSamples } : {}),
  };
}

async function runSwap(run: PlannedRun, perRole: RunResult, out: string, options: ExperimentOptions, clock: { seconds: number }, emit: (e: ExperimentEvent) => void): Promise<RunResult> {
  writeFileSync(join(run.dir, 'per-role.yaml'), run.specText);
  if (perRole.status !== 'ok') throw new ExperimentError(`the per-role run it evaluates failed (${join(out, perRole.dir)}): ${perRole.error ?? ''}`.trim());
  const perRoleDir = join(out, perRole.dir);
  const checkpoint = newestCheckpoint(perRoleDir);
  if (!checkpoint) throw new ExperimentError(`the per-role run ${perRoleDir} has no complete checkpoint (checkpoints/step-N/trainer-state.json)`);
  const rel = relative(run.dir, checkpoint);
  const spec = run.derived.spec as PlainSpec;
  const evalArgs = (file: string): string[] => ['eval', file, '--split', spec.evaluation.split, '-n', String(spec.evaluation.episodes), '--concurrency', String(spec.algorithm.concurrency), '--json'];
  const swapFile = join(run.dir, 'swap.yaml');
  const controlFile = join(run.dir, 'control.yaml');
  writeFileSync(swapFile, stringify(deriveSwapSpec(spec, rel)));
  writeFileSync(controlFile, stringify(deriveSwapSpec(spec, rel, { exchange: false })));
  const swapped = evalOf(parseJson(await troupe(run, evalArgs(swapFile), options, clock, emit), `${swapFile}: troupe eval`), `${swapFile}: troupe eval`);
  const control = evalOf(parseJson(await troupe(run, evalArgs(controlFile), options, clock, emit), `${controlFile}: troupe eval`), `${controlFile}: troupe eval`);
  const base = baseResult(run, out, clock.seconds, 'ok');
  return {
    ...base, level: run.derived.level, algorithm: 'none', eval: swapped,
    control: { episodes: control.episodes, successes: control.successes, successRate: control.successRate },
  };
}
