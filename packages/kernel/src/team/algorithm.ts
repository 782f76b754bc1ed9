/**
 * The trainer's hyper-parameters: the team spec's `algorithm` block (beyond name / branches / batchSize / steps /
 * concurrency, which the team schema checks) validated with a JSON schema, defaults filled in. Errors name the key
 * path (`algorithm.loss.aggregation: must be equal to one of the allowed values`).
 */
import { availableParallelism } from 'node:os';
import type { JsonSchema } from '../contracts/common.js';
import { compileSchema, formatPath, schemaIssues, type SchemaIssue } from '../plugins/ajv.js';
import type { TeamSpec } from './types.js';

/** `algorithm.replay`: prioritised level replay of failed train instances (the trainer's instance schedule). */
export interface ReplaySettings {
  /** Largest share of a step's instances taken from the replay queue (0 = off, the default). */
  readonly fraction: number;
  /** How many times one failed instance is played again at most. */
  readonly maxReplays: number;
}

/** How the per-token PPO objective is reduced to one loss per mini-batch. */
export type LossAggregation = 'token-mean' | 'seq-mean-token-mean' | 'dr-grpo';

/** Learning-rate schedule (after an optional linear warmup). */
export interface TrainerLrSchedule {
  /** `constant`, `linear` (decay to `minLr` at the last step) or `cosine`. */
  readonly kind: 'constant' | 'linear' | 'cosine';
  /** Warmup optimizer steps. */
  readonly warmupSteps: number;
  /** Final learning rate of the decaying schedules. */
  readonly minLr: number;
}

/** Warm start: supervised fine-tuning on the environment oracle's demonstrations before RL. */
export interface WarmStartConfig {
  /** Whether to run it (default: true when the block is present). */
  readonly enabled: boolean;
  /** Demonstration EPISODES (oracle play-throughs of train instances); each gives one sample per (turn, seat). */
  readonly demonstrations: number;
  /** Passes over the demonstrations. */
  readonly epochs: number;
  /** Peak learning rate (AdamW). */
  readonly lr: number;
  /** Sequences per SFT mini-batch. */
  readonly miniBatchSize: number;
  /** Learning-rate schedule over all SFT optimizer steps: `constant` (default), `linear` or `cosine` decay to 0. */
  readonly schedule: 'constant' | 'linear' | 'cosine';
  /** Linear warm-up steps from 0 to `lr` (default 0). */
  readonly warmupSteps: number;
  /**
   * Probability of a random action instead of the oracle's at each (turn, seat) of a demonstration play-through
   * (the target stays the oracle's action): demonstrations of recoveries. Default 0. A map `{<seat>: p}` sets it per
   * seat (seats not named: 0): noise on the executor seat shows the proposer later turns (their history lines)
   * without ever showing the executor a wrong proposal.
   */
  readonly noise: number | Readonly<Record<string, number>>;
  /**
   * Mini-batches of sequences of similar length (like Hugging Face's `group_by_length`): each epoch's shuffle is cut
   * into megabatches of 64 mini-batches, each sorted by length before it is sliced, and the mini-batches are shuffled
   * again. Less padding, the same samples per epoch, a different (still seeded) batch composition. Default false:
   * on the default team it trained ~1.25× faster but cost 10 points of held-out success (docs/training.md).
   */
  readonly groupByLength: boolean;
  /**
   * At most this many demonstration samples of the named seat (the first ones, in play order), by seat name; other
   * seats keep all of theirs. For a seat whose samples are long (a coder's program is ~380 byte tokens, a planner's
   * move list ~20), so its policy's warm start does not take most of the time. Default: no cap.
   */
  readonly maxSamples?: Readonly<Record<string, number>>;
  /**
   * Policies trained at once, each in its own worker thread (tfjs-wasm runs one thread per isolate, so two full-model
   * policies use two cores). Default: {@link defaultWorkers}. 1 trains them one after the other in the
   * main thread. LoRA-adapter policies (L2) always train in the main thread. Results are identical either way.
   */
  readonly workers?: number;
}

/** The resolved trainer configuration. */
export interface TrainerConfig {
  /** `at-grpo`, `grpo-naive` or `none`. */
  readonly name: 'at-grpo' | 'grpo-naive' | 'none';
  /** K: branches per (instance, turn, seat) (AT-GRPO) or independent rollouts per instance (grpo-naive). */
  readonly branches: number;
  /**
   * AT-GRPO only: another K for some seats, by seat name (the others keep `branches`). A seat whose samples are long
   * and whose groups rarely differ (a coder sampling programs at a low temperature) can be sampled once per (turn,
   * seat): a group of one gets advantage 0 and trains nothing, and the tree continues from that one branch.
   */
  readonly seatBranches?: Readonly<Record<string, number>>;
  /**
   * AT-GRPO only: branch 0 of each group is the seat's greedy decision, the other K − 1 are sampled (`true`: every
   * seat; `{ seat: true }`: those seats). Evaluation plays greedily, and a group of samples alone rarely holds the
   * greedy decision, so a greedy decision that fails while a sample succeeds gives no signal against it; with the
   * greedy branch it is in the group and gets a negative advantage (SCST's greedy baseline, inside the group). Default
   * false. A seat with K = 1 has no greedy branch (its one branch is sampled).
   */
  readonly greedyBranch?: boolean | Readonly<Record<string, boolean>>;
  /**
   * AT-GRPO only: the branch each (turn, seat) continues from. `best` (default, the paper's): the maximum reward.
   * `greedy`: a seat with a greedy branch continues from it (the others from their best), so the tree walks the path
   * greedy play (evaluation) takes and its later turns are trained on the states where that play went wrong, while
   * its groups still compare K branches at every state. Needs `greedyBranch`.
   */
  readonly selection?: 'best' | 'greedy';
  /**
   * Policies whose weights this run never changes, by policy name: they play their seats (their samples are
   * generated, scored, grouped and traced like any other), but the warm start and the RL updates skip them. A partner
   * held fixed while the others learn (one loaded with `model:`, or a warm-started run resumed with it frozen).
   * Default: none.
   */
  readonly freeze: readonly string[];
  /** B: instances per step. */
  readonly batchSize: number;
  /** Training steps. */
  readonly steps: number;
  /** Episodes played at once. */
  readonly concurrency: number;
  /** Learning rate (AdamW peak). Tiny byte-level models need far more than the paper's 1e-6 (see docs/training.md). */
  readonly lr: number;
  /** Learning-rate schedule. */
  readonly lrSchedule: TrainerLrSchedule;
  /** AdamW betas, eps, decoupled weight decay. */
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  readonly weightDecay: number;
  /** Global gradient-norm clip. */
  readonly maxGradNorm: number;
  /** Sequences per mini-batch (one optimizer step each). */
  readonly miniBatchSize: number;
  /**
   * Sequences per forward/backward pass (default: `miniBatchSize`, one pass per mini-batch). Smaller: a mini-batch
   * is scored in micro-batches of whole prompt groups and their gradients are summed into its one optimizer step
   * (gradient accumulation), so a large mini-batch fits the wasm heap. Also the chunk size of the log-prob
   * recomputation. Memory only: the update is the same up to float rounding.
   */
  readonly microBatchSize: number;
  /** Passes over the step's samples. */
  readonly epochs: number;
  /** PPO clip ranges and aggregation. */
  readonly loss: {
    readonly clipLow: number;
    readonly clipHigh: number;
    readonly aggregation: LossAggregation;
    /** Coefficient of the KL penalty to a frozen reference (k3 estimator); 0 = off (default). */
    readonly klCoef: number;
    /** Coefficient of the entropy bonus; 0 = off (default). */
    readonly entropyCoef: number;
    /**
     * The distribution the loss scores: `sampling` (default) = each seat's softmax at its sampling temperature (1 when
     * greedy), the distribution its samples came from, so the objective is on-policy at any temperature; `model` = the
     * model's own softmax (temperature 1) whatever the seat sampled at (off-policy for a seat that samples at T ≠ 1).
     */
    readonly logprobTemperature: 'sampling' | 'model';
  };
  /** Advantage normalisation: unbiased / biased std, or dr-grpo (no division). */
  readonly advantage: { readonly std: 'unbiased' | 'biased' | 'dr-grpo'; readonly epsilon: number };
  /**
   * What the update does with groups whose advantages are all 0 (equal rewards, or a group of one): `skip` (default)
   * leaves them out, so mini-batches hold only groups with a signal and a policy none of whose groups has one takes
   * no optimizer step; `train` puts them in mini-batches as well, where their terms are exactly 0 but they count in
   * the aggregation's denominator, and a mini-batch of nothing else still takes an AdamW step with a zero gradient —
   * which moves the weights along the moments, and after many such steps turns the next real gradient into a step of
   * ~12× the learning rate (bias correction against a second moment that stayed at 0; docs/training.md).
   */
  readonly zeroVarianceGroups: 'skip' | 'train';
  /** Replay of failed train instances (trainer/instances.ts); `fraction: 0` (the default) plays fresh instances only. */
  readonly replay: ReplaySettings;
  /** Enforce each role's output grammar while sampling (constrained decoding). */
  readonly constrainedDecoding: boolean;
  /** Evaluation on the validation split every N steps (0: never during training). */
  readonly evalEvery: number;
  /** Episodes of each periodic validation eval. */
  readonly evalEpisodes: number;
  /** Write a checkpoint every N steps (and always after the last). */
  readonly checkpointEvery: number;
  /** Keep this many most recent step checkpoints (older ones are deleted). */
  readonly keepCheckpoints: number;
  /**
   * Keep the checkpoint of the best periodic validation evaluation besides the newest ones (`checkpoints/best.json`
   * names it): a step whose validation success is above every earlier one (the warm start's included) is
   * checkpointed even between `checkpointEvery` steps, and its folder is never pruned while it is the best. Needs
   * `evalEvery` > 0. Default false.
   */
  readonly keepBest: boolean;
  /** Warm start (SFT on oracle demonstrations), when configured. */
  readonly warmStart: WarmStartConfig | undefined;
  /**
   * RL updates run at once, each full-model policy's in its own persistent worker thread (tfjs-wasm runs one thread
   * per isolate, so two L3 policies use two cores). Default: {@link defaultWorkers}. 1 updates the
   * policies one after the other in the main thread, as do LoRA adapters (L2), a shared policy (L1) and the tfjs-node
   * backends. Results are the same either way.
   */
  readonly workers: number;
}

/** JSON schema of the `algorithm` block as the trainer reads it (defaults filled in by ajv). */
export const TRAINER_CONFIG_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { enum: ['at-grpo', 'grpo-naive', 'none'], default: 'at-grpo' },
    branches: { type: 'integer', minimum: 1, default: 4 },
    seatBranches: { type: 'object', additionalProperties: { type: 'integer', minimum: 1 } },
    greedyBranch: {
      anyOf: [{ type: 'boolean' }, { type: 'object', additionalProperties: { type: 'boolean' } }],
      default: false,
    },
    selection: { enum: ['best', 'greedy'], default: 'best' },
    freeze: { type: 'array', items: { type: 'string' }, uniqueItems: true, default: [] },
    batchSize: { type: 'integer', minimum: 1, default: 8 },
    steps: { type: 'integer', minimum: 0, default: 100 },
    concurrency: { type: 'integer', minimum: 1, default: 4 },
    lr: { type: 'number', exclusiveMinimum: 0, default: 1e-4 },
    lrSchedule: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        kind: { enum: ['constant', 'linear', 'cosine'], default: 'constant' },
        warmupSteps: { type: 'integer', minimum: 0, default: 0 },
        minLr: { type: 'number', minimum: 0, default: 0 },
      },
    },
    beta1: { type: 'number', minimum: 0, exclusiveMaximum: 1, default: 0.9 },
    beta2: { type: 'number', minimum: 0, exclusiveMaximum: 1, default: 0.999 },
    eps: { type: 'number', exclusiveMinimum: 0, default: 1e-8 },
    weightDecay: { type: 'number', minimum: 0, default: 0 },
    maxGradNorm: { type: 'number', minimum: 0, default: 1 },
    miniBatchSize: { type: 'integer', minimum: 1, default: 16 },
    microBatchSize: { type: 'integer', minimum: 1 },
    epochs: { type: 'integer', minimum: 1, default: 1 },
    loss: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        clipLow: { type: 'number', minimum: 0, maximum: 1, default: 0.2 },
        clipHigh: { type: 'number', minimum: 0, default: 0.2 },
        aggregation: { enum: ['token-mean', 'seq-mean-token-mean', 'dr-grpo'], default: 'token-mean' },
        klCoef: { type: 'number', minimum: 0, default: 0 },
        entropyCoef: { type: 'number', minimum: 0, default: 0 },
        logprobTemperature: { enum: ['sampling', 'model'], default: 'sampling' },
      },
    },
    zeroVarianceGroups: { enum: ['skip', 'train'], default: 'skip' },
    replay: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        fraction: { type: 'number', minimum: 0, maximum: 0.9, default: 0 },
        maxReplays: { type: 'integer', minimum: 1, default: 2 },
      },
    },
    advantage: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        std: { enum: ['unbiased', 'biased', 'dr-grpo'], default: 'unbiased' },
        epsilon: { type: 'number', minimum: 0, default: 1e-6 },
      },
    },
    constrainedDecoding: { type: 'boolean', default: true },
    evalEvery: { type: 'integer', minimum: 0, default: 0 },
    evalEpisodes: { type: 'integer', minimum: 1, default: 32 },
    checkpointEvery: { type: 'integer', minimum: 1, default: 1 },
    keepCheckpoints: { type: 'integer', minimum: 1, default: 2 },
    keepBest: { type: 'boolean', default: false },
    workers: { type: 'integer', minimum: 1 },
    warmStart: {
      // null removes a warm start inherited through `extends` (maps merge; null replaces).
      type: ['object', 'null'],
      additionalProperties: false,
      properties: {
        enabled: { type: 'boolean', default: true },
        demonstrations: { type: 'integer', minimum: 1, default: 256 },
        epochs: { type: 'integer', minimum: 1, default: 2 },
        lr: { type: 'number', exclusiveMinimum: 0, default: 1e-3 },
        miniBatchSize: { type: 'integer', minimum: 1, default: 16 },
        schedule: { enum: ['constant', 'linear', 'cosine'], default: 'constant' },
        warmupSteps: { type: 'integer', minimum: 0, default: 0 },
        noise: {
          anyOf: [
            { type: 'number', minimum: 0, maximum: 0.95 },
            { type: 'object', additionalProperties: { type: 'number', minimum: 0, maximum: 0.95 } },
          ],
          default: 0,
        },
        groupByLength: { type: 'boolean', default: false },
        maxSamples: { type: 'object', additionalProperties: { type: 'integer', minimum: 1 } },
        workers: { type: 'integer', minimum: 1 },
      },
    },
  },
};

/** Problems in the `algorithm` block, each with its key path from the spec's root (`['algorithm', 'seatBranches', 'coder']`). */
export class TrainerConfigError extends Error {
  /** Each problem as `algorithm.<path>: <message> (<hint>)`. */
  readonly problems: readonly string[];
  constructor(
    file: string,
    readonly issues: readonly SchemaIssue[],
  ) {
    const problems = issues.map((i) => `${formatPath(i.path)}: ${i.message}${i.hint ? ` (${i.hint})` : ''}`);
    super(
      `team spec ${file}: invalid training settings:\n${problems.map((p) => `  ${p}`).join('\n')}\nSee docs/training.md for every key of 'algorithm' and its default.`,
    );
    this.problems = problems;
    this.name = 'ConfigError'; // a user-facing error: the CLI prints its message without a stack
  }
}

/** A training setting to change (outside the spec's schema: the environment, a resource limit); the message says which. */
export class TrainingSettingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError'; // user-facing: the CLI prints its message without a stack
  }
}

let validate: ReturnType<typeof compileSchema> | undefined;

/** A problem at `algorithm.<path>`. */
function issue(path: readonly (string | number)[], message: string, hint?: string): SchemaIssue {
  return { path: ['algorithm', ...path], message, ...(hint ? { hint } : {}) };
}

/**
 * Validates the spec's `algorithm` block and fills defaults. Throws {@link TrainerConfigError} listing every problem
 * with its key path (`algorithm.loss.aggregation: must be equal to one of the allowed values ...`).
 */
export function resolveTrainerConfig(
  spec: Pick<TeamSpec, 'algorithm' | 'file'> & Partial<Pick<TeamSpec, 'seats' | 'policies'>>,
  overrides: { steps?: number } = {},
): TrainerConfig {
  validate ??= compileSchema(TRAINER_CONFIG_SCHEMA);
  const raw = JSON.parse(JSON.stringify(spec.algorithm ?? {})) as Record<string, unknown>;
  if (!validate(raw)) {
    throw new TrainerConfigError(
      spec.file,
      schemaIssues(validate.errors).map((i) => ({ ...i, path: ['algorithm', ...i.path] })),
    );
  }
  const c = raw as unknown as Omit<TrainerConfig, 'warmStart' | 'workers' | 'microBatchSize'> & {
    warmStart?: WarmStartConfig;
    workers?: number;
    microBatchSize?: number;
  };
  const warm = c.warmStart && c.warmStart.enabled ? c.warmStart : undefined;
  const out: TrainerConfig = {
    ...c,
    warmStart: warm,
    workers: c.workers ?? defaultWorkers(),
    microBatchSize: c.microBatchSize ?? c.miniBatchSize,
    ...(overrides.steps !== undefined ? { steps: overrides.steps } : {}),
  };
  const seatMaps: [string, object | undefined][] = [
    ['warmStart.maxSamples', warm?.maxSamples],
    ['warmStart.noise', typeof warm?.noise === 'object' ? warm.noise : undefined],
    ['seatBranches', out.seatBranches],
    ['greedyBranch', typeof out.greedyBranch === 'object' ? out.greedyBranch : undefined],
  ];
  const problems: SchemaIssue[] = seatMaps.flatMap(([key, map]) =>
    Object.keys(map ?? {})
      .filter((seat) => spec.seats && !(seat in spec.seats))
      .map((seat) => ({
        ...issue(
          [...key.split('.'), seat],
          `no seat '${seat}' in 'seats'`,
          `the team's seats: ${Object.keys(spec.seats!).join(', ')}`,
        ),
        unknownKey: true,
      })),
  );
  const policies = spec.policies ? Object.keys(spec.policies) : undefined;
  out.freeze.forEach((p, i) => {
    if (policies && !policies.includes(p))
      problems.push(
        issue(['freeze', i], `no policy '${p}' in 'policies'`, `the team's policies: ${policies.join(', ')}`),
      );
  });
  if (out.seatBranches && Object.keys(out.seatBranches).length > 0 && out.name !== 'at-grpo') {
    problems.push(
      issue(
        ['seatBranches'],
        `per-seat branches are AT-GRPO's (its tree samples each seat K times); '${out.name}' has none, remove the key`,
      ),
    );
  }
  if (anyGreedyBranch(out) && out.name !== 'at-grpo') {
    problems.push(
      issue(
        ['greedyBranch'],
        `the greedy branch is a branch of AT-GRPO's tree; '${out.name}' has none, remove the key`,
      ),
    );
  }
  if (out.selection === 'greedy' && (out.name !== 'at-grpo' || !anyGreedyBranch(out))) {
    problems.push(
      issue(
        ['selection'],
        `'greedy' continues each seat from its greedy branch; set algorithm.greedyBranch (true, or {<seat>: true}) under algorithm name 'at-grpo', or use selection 'best'`,
      ),
    );
  }
  if (out.keepBest && out.evalEvery === 0) {
    problems.push(
      issue(
        ['keepBest'],
        `the best checkpoint is chosen by the periodic validation evaluations, and evalEvery is 0; set algorithm.evalEvery (e.g. 5) or remove the key`,
      ),
    );
  }
  if (out.name === 'grpo-naive' && out.branches < 2) {
    problems.push(
      issue(['branches'], `grpo-naive needs at least 2 rollouts per instance to form a group, got ${out.branches}`),
    );
  }
  if (problems.length > 0) throw new TrainerConfigError(spec.file, problems);
  return out;
}

/** Whether the seat's tree groups hold a greedy branch (`algorithm.greedyBranch`). */
export function hasGreedyBranch(config: Pick<TrainerConfig, 'greedyBranch'>, seat: string): boolean {
  const g = config.greedyBranch ?? false;
  return typeof g === 'boolean' ? g : g[seat] === true;
}

/** Whether any seat has a greedy branch. */
function anyGreedyBranch(config: Pick<TrainerConfig, 'greedyBranch'>): boolean {
  const g = config.greedyBranch ?? false;
  return typeof g === 'boolean' ? g : Object.values(g).some(Boolean);
}

/**
 * Worker threads a training uses when its spec does not say (`algorithm.workers`, `warmStart.workers`): the
 * `TROUPE_WORKERS` environment variable when set (the experiment runner sets it for its children so that `--jobs`
 * trainings side by side share the cores instead of each taking all of them), else the machine's available
 * parallelism. Results do not depend on it.
 */
export function defaultWorkers(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.TROUPE_WORKERS;
  if (raw === undefined || raw === '') return availableParallelism();
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) {
    throw new TrainingSettingError(
      `TROUPE_WORKERS must be a positive integer (worker threads per training), got ${JSON.stringify(raw)}; unset it to use every core`,
    );
  }
  return n;
}
