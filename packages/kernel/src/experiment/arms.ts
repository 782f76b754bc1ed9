/**
 * The arms of the paper's table (ATGRPO.md "Baselines"), derived from ONE base team spec per game: two or more seats
 * (e.g. proposer + executor) each mapped to its own policy (L3), like `presets/default-team.yaml`.
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
 * At our scale every policy starts from scratch, so EVERY arm gets the base spec's warm start (SFT on oracle
 * demonstrations of its own seats); the "no RL" arms are the warm start alone, the analog of the paper's pretrained
 * base. Every RL arm gets the same sample budget: the same number of generated samples per step (B scaled by the
 * seat count, K fixed) and the same planned steps; the runner tops a run up by measured samples (see runner.ts).
 *
 * Everything here is pure: plain objects in, plain YAML-able objects out.
 */
import { dirname, isAbsolute, resolve } from 'node:path';
import { EMBEDDED } from '../team/load.js';
import type { PolicySpecEntry, TeamSpec } from '../team/types.js';

/** The arms, in the order of the table. */
export const ARM_NAMES = ['single', 'single-grpo', 'mas-prompt', 'mas-naive-grpo', 'mas-atgrpo-shared', 'mas-atgrpo-per-role', 'swap'] as const;

/** One arm of the table. */
export type ArmName = (typeof ARM_NAMES)[number];

/** The policy mapping level an arm trains at (ATGRPO.md). */
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
  /** The arm whose run it needs first (swap: the per-role run). */
  readonly dependsOn?: ArmName;
}

/** Every arm's description. */
export const ARMS: Readonly<Record<ArmName, ArmInfo>> = Object.freeze({
  single: { name: 'single', title: 'single agent', algorithm: 'none', rl: false, evalOnly: false },
  'single-grpo': { name: 'single-grpo', title: 'single agent + GRPO', algorithm: 'at-grpo', rl: true, evalOnly: false },
  'mas-prompt': { name: 'mas-prompt', title: 'MAS prompt-only', algorithm: 'none', rl: false, evalOnly: false },
  'mas-naive-grpo': { name: 'mas-naive-grpo', title: 'MAS + GRPO (naive)', algorithm: 'grpo-naive', rl: true, evalOnly: false },
  'mas-atgrpo-shared': { name: 'mas-atgrpo-shared', title: 'MAS + AT-GRPO shared (L1)', algorithm: 'at-grpo', rl: true, evalOnly: false },
  'mas-atgrpo-per-role': { name: 'mas-atgrpo-per-role', title: 'MAS + AT-GRPO per-role', algorithm: 'at-grpo', rl: true, evalOnly: false },
  swap: { name: 'swap', title: 'per-role, roles swapped', algorithm: 'none', rl: false, evalOnly: true, dependsOn: 'mas-atgrpo-per-role' },
});

/** A problem with an experiment's inputs that the user can fix (the message says how). */
export class ExperimentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError'; // user-facing: the CLI prints the message without a stack
  }
}

/** Parses a comma-separated list of arm names; throws {@link ExperimentError} naming an unknown one. */
export function parseArmList(text: string): ArmName[] {
  const names = text.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  if (names.length === 0) throw new ExperimentError(`--arms: no arm given; the arms are ${ARM_NAMES.join(', ')}`);
  for (const n of names) {
    if (!(ARM_NAMES as readonly string[]).includes(n)) throw new ExperimentError(`--arms: unknown arm "${n}"; the arms are ${ARM_NAMES.join(', ')}`);
  }
  const arms = ARM_NAMES.filter((a) => names.includes(a));
  for (const a of arms) {
    const dep = ARMS[a].dependsOn;
    if (dep && !arms.includes(dep)) throw new ExperimentError(`--arms: arm "${a}" evaluates the policies of the "${dep}" run; add ${dep} to --arms`);
  }
  return arms;
}

/** A plain, YAML-able team spec (the fields of {@link TeamSpec} without `file`). */
export type PlainSpec = Record<string, unknown> & {
  name: string;
  seed: number;
  environment: { id: string; config: Record<string, unknown> };
  seats: Record<string, { role: string; roleConfig: Record<string, unknown>; policy: string; sampling: Record<string, unknown> }>;
  policies: Record<string, PolicySpecEntry>;
  rewards: { id: string; config: Record<string, unknown>; seats: Record<string, unknown> };
  algorithm: Record<string, unknown> & { name: string; branches: number; batchSize: number; steps: number; concurrency: number };
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

/** The level of a spec's seat → policy mapping: L0 one seat, L1 a shared policy, L2 LoRA per seat, L3 full per seat. */
export function specLevel(spec: Pick<PlainSpec, 'seats' | 'policies'>): ArmLevel {
  const seats = Object.values(spec.seats);
  if (seats.length === 1) return 'L0';
  if (new Set(seats.map((s) => s.policy)).size < seats.length) return 'L1';
  return seats.every((s) => spec.policies[s.policy]?.lora !== undefined) ? 'L2' : 'L3';
}

/** `environment.config.maxTurns` of a spec (every shipped game has one), or an error naming the file and key. */
export function maxTurnsOf(spec: Pick<PlainSpec, 'environment'>, where: string): number {
  const t = spec.environment.config.maxTurns;
  if (typeof t !== 'number' || !Number.isInteger(t) || t < 1) {
    throw new ExperimentError(`${where}: environment.config.maxTurns must be set (a positive integer) to size the sample budget; got ${JSON.stringify(t)}`);
  }
  return t;
}

/** Checks that a base spec has at least two seats, each with its own policy (the per-role team the arms derive from). */
function checkBase(base: PlainSpec, where: string, singleSeat: string): void {
  const seats = Object.entries(base.seats);
  if (seats.length < 2) throw new ExperimentError(`${where}: the base spec must be a team (two or more seats); it has ${seats.length} (${seats.map(([s]) => s).join(', ')})`);
  const owners = new Map<string, string>();
  for (const [seat, entry] of seats) {
    const other = owners.get(entry.policy);
    if (other) throw new ExperimentError(`${where}: the base spec must map each seat to its own policy (per-role, L3 like default-team); seats ${other} and ${seat} share policy '${entry.policy}'`);
    owners.set(entry.policy, seat);
  }
  if (!base.seats[singleSeat]) throw new ExperimentError(`${where}: the single-agent arms play seat '${singleSeat}', which the base spec does not have (seats: ${seats.map(([s]) => s).join(', ')})`);
  const b = base.algorithm;
  if (!(Number.isInteger(b.branches) && b.branches >= 2)) throw new ExperimentError(`${where}: algorithm.branches must be at least 2 (GRPO groups); got ${JSON.stringify(b.branches)}`);
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
 */
export function deriveArm(baseSpec: TeamSpec | PlainSpec, name: ArmName, options: DeriveOptions): DerivedArm {
  const arm = ARMS[name];
  if (!arm) throw new ExperimentError(`unknown arm "${String(name)}"; the arms are ${ARM_NAMES.join(', ')}`);
  const base = 'file' in baseSpec ? plainSpec(baseSpec as TeamSpec) : clone(baseSpec);
  const where = `${options.label ?? base.name} (${'file' in baseSpec ? (baseSpec as TeamSpec).file : base.name})`;
  const singleSeat = options.singleSeat ?? 'executor';
  checkBase(base, where, singleSeat);
  const { budget: defaultBudget } = baseBudget(base, where);
  const budget = options.budget ?? defaultBudget;
  if (!(Number.isInteger(budget) && budget > 0)) throw new ExperimentError(`${where}: the sample budget must be a positive integer, got ${budget}`);

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
  } else if (name === 'mas-atgrpo-shared') {
    // One policy for every seat (L1): the single seat's policy config, named `shared`.
    const source = spec.policies[spec.seats[singleSeat]!.policy]!;
    spec.policies = { shared: source };
    for (const seat of Object.values(spec.seats)) seat.policy = 'shared';
  }

  const seats = Object.keys(spec.seats).length;
  const T = maxTurnsOf(spec, where);
  const K = base.algorithm.branches;
  // Same samples per step for every arm: B scales with the seat count (a single seat plays twice the instances).
  const B = Math.max(1, Math.round((base.algorithm.batchSize * baseSeats) / seats));
  const perStep = B * K * seats * T;
  const steps = specArm.rl ? Math.max(1, Math.round(budget / perStep)) : 0;
  const algorithm: PlainSpec['algorithm'] = { ...spec.algorithm, name: specArm.algorithm, batchSize: B, branches: K, steps };
  // The table needs no validation evals during training; evaluation is the runner's, on the held-out split.
  algorithm.evalEvery = 0;
  spec.algorithm = algorithm;
  if (options.episodes !== undefined) spec.evaluation = { ...spec.evaluation, episodes: options.episodes };
  return {
    arm, seed: options.seed, spec, level: specLevel(spec),
    budget: { batchSize: B, branches: K, seats, maxTurns: T, samplesPerStep: perStep, steps: arm.rl ? steps : 0, budget: arm.rl ? budget : 0 },
  };
}

/**
 * The swap arm's spec: the per-role run's final policies loaded from its checkpoint (`model: <ckpt>/<policy>`, or
 * `adapter:` for LoRA), with the seats' policies exchanged — seat i is played by the policy trained on seat i+1's
 * samples (cyclic; for two seats, an exchange). `exchange: false` gives the control (the same policies on their own
 * seats, which must reproduce the per-role result). `checkpoint` is written into the spec as given (relative paths
 * are read relative to the spec file). No training: algorithm `none`, steps 0, no warm start.
 */
export function deriveSwapSpec(perRole: PlainSpec, checkpoint: string, options: { exchange?: boolean } = {}): PlainSpec {
  const exchange = options.exchange ?? true;
  const spec = clone(perRole);
  const seatNames = Object.keys(spec.seats);
  const owners = seatNames.map((s) => perRole.seats[s]!.policy);
  if (new Set(owners).size !== owners.length) throw new ExperimentError(`${perRole.name}: the swap arm needs one policy per seat; seats ${seatNames.join(', ')} map to ${owners.join(', ')}`);
  const policies: Record<string, PolicySpecEntry> = {};
  for (const name of owners) {
    const p = perRole.policies[name] as Record<string, unknown>;
    if (p.kind !== 'tfjs-causal-lm') throw new ExperimentError(`${perRole.name}: the swap arm loads trained checkpoints; policy '${name}' is '${String(p.kind)}', not tfjs-causal-lm`);
    const dir = `${checkpoint.replace(/\/+$/, '')}/${name}`;
    const kept: Record<string, unknown> = { kind: 'tfjs-causal-lm' };
    for (const key of ['backend', 'batchPrompts']) if (p[key] !== undefined) kept[key] = p[key];
    if (p.lora !== undefined) {
      // The checkpoint holds the adapter only: the same base, the trained adapter.
      for (const key of ['model', 'preset', 'modelType', 'tokenizer', 'seed']) if (p[key] !== undefined) kept[key] = p[key];
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
