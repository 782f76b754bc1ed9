/**
 * The arms of the paper's table (the paper's "Baselines"), derived from ONE base team spec per game: two or more seats
 * (e.g. proposer + executor) each mapped to its own policy (L3), like `presets/plan-path-planner-team.yaml`.
 *
 * | arm | what it is | level | algorithm |
 * |---|---|---|---|
 * | `single` | the single seat (`environment.config.seats: [executor]`), warm start only | L0 | none |
 * | `single-grpo` | the same, then AT-GRPO (a tree over one seat) | L0 | at-grpo |
 * | `mas-prompt` | the team, warm start only | L3 | none |
 * | `mas-naive-grpo` | the team, trajectory-grouped GRPO | L3 | grpo-naive |
 * | `mas-atgrpo-shared` | one policy for every seat | L1 | at-grpo |
 * | `mas-atgrpo-per-role` | the base spec itself | L3 (L2 with LoRA) | at-grpo |
 * | `swap` | the per-role run's final policies, seats exchanged; evaluation only | L3 | none |
 *
 * At our scale every policy starts from scratch, so EVERY arm starts from the base spec's warm start (SFT on oracle
 * demonstrations of its own seats); the "no RL" arms are the warm start alone, the analog of the paper's pretrained
 * base. Arms with the same seats and policies have the same warm start, so it is run once and shared: `single-grpo`
 * starts its RL from the step-0 checkpoint of the `single` run, `mas-naive-grpo` and `mas-atgrpo-per-role` from that
 * of `mas-prompt` (`dependsOn` + `uses: 'warm-start'`; {@link deriveArm} checks that the source's warm start is
 * exactly the one the arm would have run itself). `mas-atgrpo-shared` runs its own: one policy trained on both seats'
 * demonstrations is a different SFT. Every RL arm gets the same sample budget: the same number of generated samples
 * per step (B scaled by the seat count, K fixed) and the same planned steps; the runner tops a run up by measured
 * samples (see runner.ts).
 *
 * Everything here is pure: plain objects in, plain YAML-able objects out.
 */
import { dirname, isAbsolute, resolve } from 'node:path';
import { EMBEDDED, type PolicySpecEntry, type TeamSpec } from '@troupe/kernel';

/** The arms, in the order of the table. */
export const ARM_NAMES = [
  'single',
  'single-grpo',
  'mas-prompt',
  'mas-naive-grpo',
  'mas-atgrpo-shared',
  'mas-atgrpo-per-role',
  'swap',
] as const;

/** One arm of the table. */
export type ArmName = (typeof ARM_NAMES)[number];

/** The policy mapping level an arm trains at (the Stronger-MAS paper). */
export type ArmLevel = 'L0' | 'L1' | 'L2' | 'L3';

/** What an arm is. */
export interface ArmInfo {
  /** The arm's id (`mas-atgrpo-per-role`). */
  readonly name: ArmName;
  /** The row label of the paper's table (`MAS + AT-GRPO per-role`). */
  readonly title: string;
  /** The training algorithm after the warm start (`none`: no RL). */
  readonly algorithm: 'none' | 'at-grpo' | 'grpo-naive';
  /** Whether the arm trains with RL (and so spends the sample budget). */
  readonly rl: boolean;
  /** Whether the arm only evaluates policies trained by another arm (no warm start of its own). */
  readonly evalOnly: boolean;
  /**
   * The arm whose run (same game and seed) it needs first: the run it starts from or evaluates (see `uses`). The
   * runner starts it only after that run finished, and marks it failed without running it when that run failed.
   */
  readonly dependsOn?: ArmName;
  /**
   * What it takes from the `dependsOn` run: `warm-start` — that run's step-0 checkpoint (its warm start) as its
   * initial policies, instead of a warm start of its own; `final` — that run's newest checkpoint, to evaluate (swap).
   */
  readonly uses?: 'warm-start' | 'final';
}

/** Every arm's description. */
export const ARMS: Readonly<Record<ArmName, ArmInfo>> = Object.freeze({
  single: { name: 'single', title: 'single agent', algorithm: 'none', rl: false, evalOnly: false },
  'single-grpo': {
    name: 'single-grpo',
    title: 'single agent + GRPO',
    algorithm: 'at-grpo',
    rl: true,
    evalOnly: false,
    dependsOn: 'single',
    uses: 'warm-start',
  },
  'mas-prompt': { name: 'mas-prompt', title: 'MAS prompt-only', algorithm: 'none', rl: false, evalOnly: false },
  'mas-naive-grpo': {
    name: 'mas-naive-grpo',
    title: 'MAS + GRPO (naive)',
    algorithm: 'grpo-naive',
    rl: true,
    evalOnly: false,
    dependsOn: 'mas-prompt',
    uses: 'warm-start',
  },
  'mas-atgrpo-shared': {
    name: 'mas-atgrpo-shared',
    title: 'MAS + AT-GRPO shared (L1)',
    algorithm: 'at-grpo',
    rl: true,
    evalOnly: false,
  },
  'mas-atgrpo-per-role': {
    name: 'mas-atgrpo-per-role',
    title: 'MAS + AT-GRPO per-role',
    algorithm: 'at-grpo',
    rl: true,
    evalOnly: false,
    dependsOn: 'mas-prompt',
    uses: 'warm-start',
  },
  swap: {
    name: 'swap',
    title: 'per-role, roles swapped',
    algorithm: 'none',
    rl: false,
    evalOnly: true,
    dependsOn: 'mas-atgrpo-per-role',
    uses: 'final',
  },
});

/** A problem with an experiment's inputs that the user can fix (the message says how). */
export class ExperimentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError'; // user-facing: the CLI prints the message without a stack
  }
}

/** How an arm needs its `dependsOn` run, for messages: `starts from the warm start of` / `evaluates the policies of`. */
export function dependencyVerb(arm: ArmName): string {
  return ARMS[arm].uses === 'warm-start' ? 'starts from the warm start of' : 'evaluates the policies of';
}

/**
 * The arms with every run they depend on added (transitively: `swap` → `mas-atgrpo-per-role` → `mas-prompt`), in
 * table order.
 */
export function withSources(arms: readonly ArmName[]): ArmName[] {
  const all = new Set(arms);
  for (let grew = true; grew;) {
    grew = false;
    for (const a of [...all]) {
      const dep = ARMS[a].dependsOn;
      if (dep && !all.has(dep)) {
        all.add(dep);
        grew = true;
      }
    }
  }
  return ARM_NAMES.filter((a) => all.has(a));
}

/**
 * Parses a comma-separated list of arm names (throws {@link ExperimentError} naming an unknown one) and adds the
 * arms they depend on ({@link withSources}): `--arms mas-atgrpo-per-role` also runs `mas-prompt`, whose warm start it
 * starts from. Table order.
 */
export function parseArmList(text: string): ArmName[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (names.length === 0) throw new ExperimentError(`--arms: no arm given; the arms are ${ARM_NAMES.join(', ')}`);
  for (const n of names) {
    if (!(ARM_NAMES as readonly string[]).includes(n))
      throw new ExperimentError(`--arms: unknown arm "${n}"; the arms are ${ARM_NAMES.join(', ')}`);
  }
  return withSources(names as ArmName[]);
}

/** A plain, YAML-able team spec (the fields of {@link TeamSpec} without `file`). */
export type PlainSpec = Record<string, unknown> & {
  name: string;
  seed: number;
  environment: { id: string; config: Record<string, unknown> };
  seats: Record<
    string,
    { role: string; roleConfig: Record<string, unknown>; policy: string; sampling: Record<string, unknown> }
  >;
  policies: Record<string, PolicySpecEntry>;
  rewards: { id: string; config: Record<string, unknown>; seats: Record<string, unknown> };
  algorithm: Record<string, unknown> & {
    name: string;
    branches: number;
    batchSize: number;
    steps: number;
    concurrency: number;
  };
  evaluation: { split: string; episodes: number };
};

/** Options of {@link deriveArm}. */
export interface DeriveOptions {
  /** Seed index (0, 1, ...): 0 keeps the base seeds; s > 0 adds `s · SEED_STRIDE` to the spec seed and every policy seed. */
  readonly seed: number;
  /** Sample budget (generated RL samples per run); default: the base spec's steps × its samples per step. */
  readonly budget?: number;
  /** Evaluation episodes (held-out split); default: the base spec's `evaluation.episodes`. */
  readonly episodes?: number;
  /** The seat of the single-agent arms. Default `executor`. */
  readonly singleSeat?: string;
  /** A label for error messages (the game), e.g. `plan-path`. */
  readonly label?: string;
  /**
   * Arms that share a warm start (`uses: 'warm-start'`): the source's step-0 checkpoint folder as written into the
   * spec (relative paths are read relative to the spec file). Default {@link sourceCheckpoint}: the runner's layout,
   * relative to the arm's run folder.
   */
  readonly sourceCheckpoint?: string;
  /** Derive the arm as if it had no warm-start source: with its own `algorithm.warmStart` (checks and tests). */
  readonly ownWarmStart?: boolean;
}

/** The planned size of an RL arm's run. */
export interface ArmBudget {
  /** B: instances per step (scaled so that every arm generates the same samples per step). */
  readonly batchSize: number;
  /** K: branches (at-grpo) or rollouts per instance (grpo-naive). */
  readonly branches: number;
  /** Seats N of the arm. */
  readonly seats: number;
  /** T: the environment's `maxTurns`. */
  readonly maxTurns: number;
  /** Most samples one step can generate: B·K·N·T (fewer when episodes end early). */
  readonly samplesPerStep: number;
  /** Planned steps: round(budget / samplesPerStep), at least 1 (0 for arms without RL). */
  readonly steps: number;
  /** The sample budget the runner tops up to (0 for arms without RL). */
  readonly budget: number;
}

/** One derived arm: its spec (YAML-able) and plan. */
export interface DerivedArm {
  /** The arm. */
  readonly arm: ArmInfo;
  /** Seed index. */
  readonly seed: number;
  /** The generated team spec (for `swap`: the per-role spec, whose trained policies {@link deriveSwapSpec} exchanges). */
  readonly spec: PlainSpec;
  /** The level the spec trains at. */
  readonly level: ArmLevel;
  /** Run size. */
  readonly budget: ArmBudget;
  /** Arms that start from another arm's warm start: that arm and its checkpoint folder as written into the spec. */
  readonly source?: { readonly arm: ArmName; readonly checkpoint: string };
}

/** Where a run's warm start is: its step-0 checkpoint (written by `troupe train` after the warm start). */
export const WARM_START_CHECKPOINT = 'checkpoints/step-0';

/**
 * The step-0 checkpoint of the `source` run of seed index `seed`, relative to a sibling run folder of the runner's
 * layout (`runs/<game>/<arm>/seed-<s>/`): `../../<source>/seed-<s>/checkpoints/step-0`.
 */
export function sourceCheckpoint(source: ArmName, seed: number): string {
  return `../../${source}/seed-${seed}/${WARM_START_CHECKPOINT}`;
}

/** Added to the spec seed and every policy seed per seed index. */
export const SEED_STRIDE = 1000;

const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

/** The base spec as a plain object: `file` dropped, relative policy paths made absolute (the arm specs live elsewhere). */
export function plainSpec(spec: TeamSpec): PlainSpec {
  const { file, ...rest } = clone(spec) as unknown as PlainSpec & { file: string };
  const baseDir = file === EMBEDDED ? process.cwd() : dirname(file);
  for (const p of Object.values(rest.policies)) {
    const entry = p as Record<string, unknown>;
    for (const key of ['model', 'adapter', 'tokenizer'] as const) {
      const v = entry[key];
      if (typeof v !== 'string' || isAbsolute(v)) continue;
      if (key === 'tokenizer' && (v === 'tiny' || v === 'qwen3')) continue; // names, not folders
      entry[key] = resolve(baseDir, v);
    }
  }
  return rest;
}

/** Whether a policy trains (or loads) a LoRA adapter on a frozen base: `lora:` or `adapter:`. */
function isAdapterPolicy(p: PolicySpecEntry | undefined): boolean {
  const e = p as Record<string, unknown> | undefined;
  return e !== undefined && (e.lora !== undefined || e.adapter !== undefined);
}

/** The level of a spec's seat → policy mapping: L0 one seat, L1 a shared policy, L2 LoRA per seat, L3 full per seat. */
export function specLevel(spec: Pick<PlainSpec, 'seats' | 'policies'>): ArmLevel {
  const seats = Object.values(spec.seats);
  if (seats.length === 1) return 'L0';
  if (new Set(seats.map((s) => s.policy)).size < seats.length) return 'L1';
  return seats.every((s) => isAdapterPolicy(spec.policies[s.policy])) ? 'L2' : 'L3';
}

/** `environment.config.maxTurns` of a spec (every shipped game has one), or an error naming the file and key. */
export function maxTurnsOf(spec: Pick<PlainSpec, 'environment'>, where: string): number {
  const t = spec.environment.config.maxTurns;
  if (typeof t !== 'number' || !Number.isInteger(t) || t < 1) {
    throw new ExperimentError(
      `${where}: environment.config.maxTurns must be set (a positive integer) to size the sample budget; got ${JSON.stringify(t)}`,
    );
  }
  return t;
}

/** Checks that a base spec has at least two seats, each with its own policy (the per-role team the arms derive from). */
function checkBase(base: PlainSpec, where: string, singleSeat: string): void {
  const seats = Object.entries(base.seats);
  if (seats.length < 2)
    throw new ExperimentError(
      `${where}: the base spec must be a team (two or more seats); it has ${seats.length} (${seats.map(([s]) => s).join(', ')})`,
    );
  const owners = new Map<string, string>();
  for (const [seat, entry] of seats) {
    const other = owners.get(entry.policy);
    if (other)
      throw new ExperimentError(
        `${where}: the base spec must map each seat to its own policy (per-role, L3 like plan-path-planner-team); seats ${other} and ${seat} share policy '${entry.policy}'`,
      );
    owners.set(entry.policy, seat);
  }
  if (!base.seats[singleSeat])
    throw new ExperimentError(
      `${where}: the single-agent arms play seat '${singleSeat}', which the base spec does not have (seats: ${seats.map(([s]) => s).join(', ')})`,
    );
  const b = base.algorithm;
  if (!(Number.isInteger(b.branches) && b.branches >= 2))
    throw new ExperimentError(
      `${where}: algorithm.branches must be at least 2 (GRPO groups); got ${JSON.stringify(b.branches)}`,
    );
}

/** Samples per step of the per-role base (B·K·N·T) and the default budget (its steps × that). */
export function baseBudget(base: PlainSpec, where: string): { samplesPerStep: number; budget: number } {
  const a = base.algorithm;
  const perStep = a.batchSize * a.branches * Object.keys(base.seats).length * maxTurnsOf(base, where);
  return { samplesPerStep: perStep, budget: perStep * a.steps };
}

/** Offsets the spec seed and every explicit policy seed by `s · SEED_STRIDE`. */
function reseed(spec: PlainSpec, s: number): void {
  if (s === 0) return;
  spec.seed = spec.seed + s * SEED_STRIDE;
  for (const p of Object.values(spec.policies)) {
    const entry = p as Record<string, unknown>;
    if (typeof entry.seed === 'number') entry.seed = entry.seed + s * SEED_STRIDE;
  }
}

/**
 * Derives the spec of one arm for one seed from a per-role base spec (see the module comment). Throws
 * {@link ExperimentError} when the base is not a per-role team or lacks `maxTurns`. The `swap` arm's spec here is the
 * per-role spec, byte for byte (its trained policies are exchanged by {@link deriveSwapSpec} once that run exists).
 *
 * An arm with a warm-start source (`uses: 'warm-start'`: `single-grpo`, `mas-naive-grpo`, `mas-atgrpo-per-role`)
 * loads its policies from the source's step-0 checkpoint (`options.sourceCheckpoint`, see
 * {@link policiesFromCheckpoint}) and has no `algorithm.warmStart`; before that, the source's spec is derived too and
 * its {@link warmStartInputs} must equal the ones of the arm's own warm start (`ownWarmStart: true`), so the shared
 * warm start is exactly the one the arm would have run itself (same demonstrations, seeds and initial weights).
 */
export function deriveArm(baseSpec: TeamSpec | PlainSpec, name: ArmName, options: DeriveOptions): DerivedArm {
  const arm = ARMS[name];
  if (!arm) throw new ExperimentError(`unknown arm "${String(name)}"; the arms are ${ARM_NAMES.join(', ')}`);
  const base = 'file' in baseSpec ? plainSpec(baseSpec as TeamSpec) : clone(baseSpec);
  const where = `${options.label ?? base.name} (${'file' in baseSpec ? (baseSpec as TeamSpec).file : base.name})`;
  return derive(base, arm, options, where);
}

/** {@link deriveArm} of a plain base. */
function derive(base: PlainSpec, arm: ArmInfo, options: DeriveOptions, where: string): DerivedArm {
  const name = arm.name;
  const own = deriveOwn(base, arm, options, where);
  if (options.ownWarmStart) return own;
  // The swap arm plans the per-role spec as that arm runs it (from the shared warm start).
  if (name === 'swap') return { ...own, spec: derive(base, ARMS['mas-atgrpo-per-role'], options, where).spec };
  if (arm.uses !== 'warm-start') return own;

  const sourceArm = arm.dependsOn!;
  const source = deriveOwn(base, ARMS[sourceArm], { ...options, ownWarmStart: true }, where);
  const diff = firstDifference(warmStartInputs(own.spec), warmStartInputs(source.spec), '');
  if (diff !== undefined) {
    throw new ExperimentError(
      `${where}: arm "${name}" cannot share the warm start of "${sourceArm}": their warm starts would differ at ${diff}`,
    );
  }
  const checkpoint = options.sourceCheckpoint ?? sourceCheckpoint(sourceArm, options.seed);
  const spec = own.spec;
  spec.policies = policiesFromCheckpoint(spec.policies, checkpoint, `${where} ${name}`);
  const { warmStart: _warm, ...algorithm } = spec.algorithm;
  spec.algorithm = algorithm as PlainSpec['algorithm'];
  return { ...own, spec, source: { arm: sourceArm, checkpoint } };
}

/** {@link deriveArm} without the warm-start source: every arm with the base spec's own warm start. */
function deriveOwn(base: PlainSpec, arm: ArmInfo, options: DeriveOptions, where: string): DerivedArm {
  const name = arm.name;
  const singleSeat = options.singleSeat ?? 'executor';
  checkBase(base, where, singleSeat);
  const { budget: defaultBudget } = baseBudget(base, where);
  const budget = options.budget ?? defaultBudget;
  if (!(Number.isInteger(budget) && budget > 0))
    throw new ExperimentError(`${where}: the sample budget must be a positive integer, got ${budget}`);

  // The swap arm evaluates the per-role run: its spec IS the per-role spec (deriveSwapSpec exchanges the policies).
  const specArm = ARMS[name === 'swap' ? 'mas-atgrpo-per-role' : name];
  const spec = clone(base);
  const baseSeats = Object.keys(base.seats).length;
  spec.name = `${base.name}.${specArm.name}.seed-${options.seed}`;
  reseed(spec, options.seed);

  if (name === 'single' || name === 'single-grpo') {
    // One seat: the environment plays only it, the team keeps only its seat, policy and reward mix.
    const seat = spec.seats[singleSeat]!;
    spec.environment = { ...spec.environment, config: { ...spec.environment.config, seats: [singleSeat] } };
    spec.seats = { [singleSeat]: seat };
    spec.policies = { [seat.policy]: spec.policies[seat.policy]! };
    const mix = spec.rewards.seats[singleSeat];
    spec.rewards = { ...spec.rewards, seats: mix ? { [singleSeat]: mix } : {} };
    // Per-seat settings (warm-start caps and noise, tree branches) of the seats that are gone go with them.
    const onlySeat = <V>(map: Record<string, V>) =>
      Object.fromEntries(Object.entries(map).filter(([s]) => s === singleSeat));
    const warm = spec.algorithm['warmStart'] as
      { maxSamples?: Record<string, number>; noise?: number | Record<string, number> } | undefined;
    if (warm?.maxSamples) warm.maxSamples = onlySeat(warm.maxSamples);
    if (warm && typeof warm.noise === 'object') warm.noise = onlySeat(warm.noise);
    const seatBranches = spec.algorithm['seatBranches'] as Record<string, number> | undefined;
    if (seatBranches) spec.algorithm['seatBranches'] = onlySeat(seatBranches);
    const greedy = spec.algorithm['greedyBranch'];
    if (greedy !== null && typeof greedy === 'object') {
      const kept = onlySeat(greedy as Record<string, boolean>);
      spec.algorithm['greedyBranch'] = kept;
      // greedy selection needs a greedy seat; without one the single seat continues from its best branch
      if (!Object.values(kept).some(Boolean)) delete spec.algorithm['selection'];
    }
  } else if (name === 'mas-atgrpo-shared') {
    // One policy for every seat (L1): the single seat's policy config, named `shared` (frozen when that one was).
    const sourceName = spec.seats[singleSeat]!.policy;
    spec.policies = { shared: spec.policies[sourceName]! };
    for (const seat of Object.values(spec.seats)) seat.policy = 'shared';
    const frozen = spec.algorithm['freeze'] as string[] | undefined;
    if (frozen) spec.algorithm['freeze'] = frozen.map((p) => (p === sourceName ? 'shared' : p));
  }
  // A frozen policy the arm's team no longer has (the single agent's other seat, the shared arm's others) goes with it.
  const frozen = spec.algorithm['freeze'] as string[] | undefined;
  if (frozen) spec.algorithm['freeze'] = frozen.filter((p) => p in spec.policies);

  const seats = Object.keys(spec.seats).length;
  const T = maxTurnsOf(spec, where);
  const K = base.algorithm.branches;
  // Same samples per step for every arm: B scales with the seat count (a single seat plays twice the instances).
  const B = Math.max(1, Math.round((base.algorithm.batchSize * baseSeats) / seats));
  const perStep = B * K * seats * T;
  const steps = specArm.rl ? Math.max(1, Math.round(budget / perStep)) : 0;
  const algorithm: PlainSpec['algorithm'] = {
    ...spec.algorithm,
    name: specArm.algorithm,
    batchSize: B,
    branches: K,
    steps,
  };
  // per-seat branches and the greedy branch are the tree's: grpo-naive plays K whole rollouts per instance
  if (specArm.algorithm !== 'at-grpo') {
    delete algorithm['seatBranches'];
    delete algorithm['greedyBranch'];
    delete algorithm['selection'];
  }
  // The table needs no validation evals during training; evaluation is the runner's, on the held-out split, of each
  // arm's last checkpoint at the equal sample budget (so no best checkpoint is chosen by them either).
  algorithm.evalEvery = 0;
  delete algorithm['keepBest'];
  if (specArm.rl) {
    // Stated in the run's spec (and so in its plan digest): the distribution the loss scores changed its default
    // (it was the raw model's, `model`); a results file or run folder of the old default is then another plan.
    const loss = (algorithm['loss'] ?? {}) as Record<string, unknown>;
    algorithm['loss'] = { ...loss, logprobTemperature: loss['logprobTemperature'] ?? 'sampling' };
  }
  spec.algorithm = algorithm;
  if (options.episodes !== undefined) spec.evaluation = { ...spec.evaluation, episodes: options.episodes };
  return {
    arm,
    seed: options.seed,
    spec,
    level: specLevel(spec),
    budget: {
      batchSize: B,
      branches: K,
      seats,
      maxTurns: T,
      samplesPerStep: perStep,
      steps: arm.rl ? steps : 0,
      budget: arm.rl ? budget : 0,
    },
  };
}

/**
 * Everything of a spec that determines the weights its warm start produces: the spec seed (demonstration instances,
 * noise and SFT shuffling derive from it), the environment, the seats (roles build the prompts and render the oracle's
 * actions; the seat → policy mapping routes the demonstrations), the policies (initial weights: preset, seed, model,
 * LoRA), the rewards, `algorithm.warmStart` and `algorithm.maxGradNorm` (the SFT's clip). Not: the name, the
 * evaluation and the RL settings.
 */
export function warmStartInputs(spec: PlainSpec): Record<string, unknown> {
  const { name: _name, evaluation: _evaluation, algorithm, ...rest } = clone(spec);
  return { ...rest, algorithm: { warmStart: algorithm.warmStart ?? null, maxGradNorm: algorithm.maxGradNorm ?? null } };
}

/** The key path of the first difference between two JSON values (`seats.executor.roleConfig`), or undefined. */
function firstDifference(a: unknown, b: unknown, path: string): string | undefined {
  const here = path || '(the whole spec)';
  if (a === b) return undefined;
  if (
    typeof a !== 'object' ||
    typeof b !== 'object' ||
    a === null ||
    b === null ||
    Array.isArray(a) !== Array.isArray(b)
  )
    return here;
  const ka = Object.keys(a),
    kb = Object.keys(b as object);
  for (const k of new Set([...ka, ...kb])) {
    const d = firstDifference(
      (a as Record<string, unknown>)[k],
      (b as Record<string, unknown>)[k],
      path ? `${path}.${k}` : k,
    );
    if (d !== undefined) return d;
  }
  return undefined;
}

/**
 * The policies of a spec loaded from a checkpoint of a run of that spec (`<checkpoint>/<policy>`): a full model
 * becomes `{ kind, model: <dir>, tokenizer, ... }` (`preset`, `seed` and `modelType` only shape a random
 * initialisation, so they go; the tokenizer stays the one the policy was trained with; `optimizer`, `clip`, `backend`,
 * `batchPrompts` stay); a LoRA policy (`lora:` or `adapter:`) keeps its frozen base (`model`/`preset` + `seed`) and
 * loads the trained adapter (`adapter: <dir>`, without `lora`). Throws {@link ExperimentError} for a policy that is not
 * `tfjs-causal-lm` (nothing to load).
 */
export function policiesFromCheckpoint(
  policies: Readonly<Record<string, PolicySpecEntry>>,
  checkpoint: string,
  where: string,
): Record<string, PolicySpecEntry> {
  const out: Record<string, PolicySpecEntry> = {};
  const root = checkpoint.replace(/\/+$/, '');
  for (const [name, entry] of Object.entries(policies)) {
    const p = clone(entry) as Record<string, unknown>;
    if (p.kind !== 'tfjs-causal-lm')
      throw new ExperimentError(
        `${where}: policy '${name}' is '${String(p.kind)}', not tfjs-causal-lm: there is no checkpoint to start it from`,
      );
    const dir = `${root}/${name}`;
    if (isAdapterPolicy(p as PolicySpecEntry)) {
      delete p.lora;
      p.adapter = dir;
    } else {
      // The tokenizer the policy was trained with: a preset's default is the tiny one; a model's is its own folder.
      const tokenizer = p.tokenizer ?? (p.preset !== undefined ? 'tiny' : p.model);
      for (const key of ['preset', 'seed', 'modelType']) delete p[key];
      p.model = dir;
      if (tokenizer !== undefined) p.tokenizer = tokenizer;
    }
    out[name] = p as PolicySpecEntry;
  }
  return out;
}

/**
 * The swap arm's spec: the per-role run's final policies loaded from its checkpoint (`model: <ckpt>/<policy>`, or
 * `adapter:` for LoRA), with the seats' policies exchanged — seat i is played by the policy trained on seat i+1's
 * samples (cyclic; for two seats, an exchange). `exchange: false` gives the control (the same policies on their own
 * seats, which must reproduce the per-role result). `checkpoint` is written into the spec as given (relative paths
 * are read relative to the spec file). No training: algorithm `none`, steps 0, no warm start.
 */
export function deriveSwapSpec(
  perRole: PlainSpec,
  checkpoint: string,
  options: { exchange?: boolean } = {},
): PlainSpec {
  const exchange = options.exchange ?? true;
  const spec = clone(perRole);
  const seatNames = Object.keys(spec.seats);
  const owners = seatNames.map((s) => perRole.seats[s]!.policy);
  if (new Set(owners).size !== owners.length)
    throw new ExperimentError(
      `${perRole.name}: the swap arm needs one policy per seat; seats ${seatNames.join(', ')} map to ${owners.join(', ')}`,
    );
  const policies: Record<string, PolicySpecEntry> = {};
  for (const name of owners) {
    const p = perRole.policies[name] as Record<string, unknown>;
    if (p.kind !== 'tfjs-causal-lm')
      throw new ExperimentError(
        `${perRole.name}: the swap arm loads trained checkpoints; policy '${name}' is '${String(p.kind)}', not tfjs-causal-lm`,
      );
    const dir = `${checkpoint.replace(/\/+$/, '')}/${name}`;
    const kept: Record<string, unknown> = { kind: 'tfjs-causal-lm' };
    for (const key of ['backend', 'batchPrompts']) if (p[key] !== undefined) kept[key] = p[key];
    if (isAdapterPolicy(p as PolicySpecEntry)) {
      // The checkpoint holds the adapter only: the same base, the trained adapter.
      for (const key of ['model', 'preset', 'modelType', 'tokenizer', 'seed'])
        if (p[key] !== undefined) kept[key] = p[key];
      kept.adapter = dir;
    } else {
      kept.model = dir; // HF layout with the tokenizer files
    }
    policies[name] = kept as PolicySpecEntry;
  }
  spec.policies = policies;
  seatNames.forEach((seat, i) => {
    spec.seats[seat]!.policy = exchange ? owners[(i + 1) % owners.length]! : owners[i]!;
  });
  const { warmStart: _warm, ...algorithm } = spec.algorithm;
  spec.algorithm = { ...algorithm, name: 'none', steps: 0 };
  spec.name = `${perRole.name.replace(/\.mas-atgrpo-per-role\./, '.swap.')}${exchange ? '' : '.control'}`;
  return spec;
}
