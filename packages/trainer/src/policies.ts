/**
 * The trainer's view of a team's policies: which ones train, which seats feed each, the mapping level (L0 single
 * seat, L1 shared, L2 LoRA adapter per seat, L3 full model per seat), and each trainable policy's own optimizer,
 * learning-rate schedule and frozen reference.
 */
import type { Policy, TeamSpec, TrainerConfig } from '@troupe/kernel';
import { CausalLM, AdamW, isCausalLmPolicy, lrAt, type AdamWOptions, type CausalLmPolicy } from '@troupe/lm';

/** The policy mapping level of a team (the Stronger-MAS paper). */
export type MappingLevel = 'L0' | 'L1' | 'L2' | 'L3' | 'frozen';

/** One policy as the trainer sees it. */
export interface PolicyHandle {
  /** Policy name in the team spec. */
  readonly name: string;
  /** The policy. */
  readonly policy: Policy;
  /** The trainable policy, when it is one (`tfjs-causal-lm`). */
  readonly trainable: CausalLmPolicy | undefined;
  /** Seats mapped to it, in turn order: its samples come from these seats only. */
  readonly seats: readonly string[];
  /** Whether the run leaves its weights as they are (`algorithm.freeze`): no warm start, no RL update. */
  readonly frozen: boolean;
  /** Whether only LoRA adapters train (L2). */
  readonly lora: boolean;
  /** Largest `maxTokens` among its seats (the dr-grpo horizon). */
  readonly maxTokens: number;
  /** Its RL optimizer (created by {@link PolicyHandle} `ensureOptimizer`). */
  optimizer: AdamW | undefined;
  /** The optimizer's options object; `lr` is set from the schedule before each step. */
  optimizerOptions: { -readonly [K in keyof AdamWOptions]: AdamWOptions[K] };
  /** A frozen copy of the weights for the KL penalty (full models), when enabled. */
  reference: CausalLM | undefined;
}

/**
 * A policy that declares itself inference-only (`inferenceOnly: true`, e.g. `kind: openai`, whose weights live on a
 * server): it can be played, never trained, so a training run must freeze it.
 */
function inferenceOnlyReason(policy: Policy): string | undefined {
  const p = policy as Policy & { inferenceOnly?: unknown; inferenceOnlyReason?: unknown };
  if (p.inferenceOnly !== true) return undefined;
  return typeof p.inferenceOnlyReason === 'string' ? p.inferenceOnlyReason : 'it has no trainable weights here';
}

/** Why a team cannot be trained as its spec stands (a user-facing error: the CLI prints its message). */
export class UntrainablePolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Builds the handles of a team's policies. */
export function policyHandles(
  spec: TeamSpec,
  policies: ReadonlyMap<string, Policy>,
  seatOrder: readonly string[],
  config: TrainerConfig,
): PolicyHandle[] {
  const out: PolicyHandle[] = [];
  for (const [name, policy] of policies) {
    const seats = seatOrder.filter((s) => spec.seats[s]?.policy === name);
    const trainable = isCausalLmPolicy(policy) ? policy : undefined;
    const own = trainable?.settings.optimizer;
    const maxTokens = Math.max(1, ...seats.map((s) => spec.seats[s]!.sampling.maxTokens));
    out.push({
      name,
      policy,
      trainable,
      seats,
      frozen: config.freeze.includes(name),
      lora: trainable ? trainable.model.lora.size > 0 : false,
      maxTokens,
      optimizer: undefined,
      optimizerOptions: {
        lr: typeof own?.lr === 'number' ? own.lr : config.lr,
        beta1: own?.beta1 ?? config.beta1,
        beta2: own?.beta2 ?? config.beta2,
        eps: own?.eps ?? config.eps,
        weightDecay: own?.weightDecay ?? config.weightDecay,
        maxGradNorm: own?.maxGradNorm ?? config.maxGradNorm,
      },
      reference: undefined,
    });
  }
  return out;
}

/**
 * Refuses a run that would train an inference-only policy: one that seats play, that the run does not freeze, in a
 * run that updates weights (an RL algorithm with steps, or a warm start). `algorithm.name: none` (prompt-only
 * baselines) plays such policies as they are.
 */
export function refuseUntrainable(handles: readonly PolicyHandle[], config: TrainerConfig): void {
  const updates = (config.name !== 'none' && config.steps > 0) || config.warmStart !== undefined;
  if (!updates) return;
  for (const h of handles) {
    const reason = h.trainable ? undefined : inferenceOnlyReason(h.policy);
    if (reason === undefined || h.frozen || h.seats.length === 0) continue;
    const seats = `seat${h.seats.length === 1 ? '' : 's'} ${h.seats.join(', ')}`;
    throw new UntrainablePolicyError(
      `policy '${h.name}' (${h.policy.kind}) is inference-only and cannot be trained: ${reason}. It plays ${seats}.\n` +
        `  hint: list it in algorithm.freeze (freeze: [${h.name}]) to play it as a frozen partner, ` +
        `or give the seats that learn a tfjs-causal-lm policy`,
    );
  }
}

/** The peak learning rate of a handle (the policy's own `optimizer.lr` when it gives one, else the trainer's). */
export function peakLr(h: PolicyHandle, config: TrainerConfig): number {
  const own = h.trainable?.settings.optimizer?.lr;
  return typeof own === 'number' ? own : config.lr;
}

/** A run's sample budget and the samples its steps before this one generated (`troupe train --sample-budget`). */
export interface BudgetProgress {
  readonly generated: number;
  readonly budget: number;
}

/**
 * Sets the handle's learning rate for training step `step` (1-based) from the trainer's schedule. The warm-up is
 * counted in steps; a decay runs over the steps, or, in a run with a sample budget, over the budget: at the fraction
 * of it generated before this step, so that it ends where the budget stops the run, not at a step the run may never
 * reach.
 */
export function scheduleLr(h: PolicyHandle, config: TrainerConfig, step: number, progress?: BudgetProgress): number {
  const { kind, warmupSteps, minLr } = config.lrSchedule;
  const totalSteps = decaySteps(config);
  let at = step - 1;
  if (progress && kind !== 'constant' && at >= warmupSteps)
    at = warmupSteps + Math.min(1, progress.generated / progress.budget) * (totalSteps - warmupSteps);
  const lr = lrAt({ kind, lr: peakLr(h, config), warmupSteps, totalSteps, minLr }, at);
  h.optimizerOptions.lr = lr;
  return lr;
}

/** The step at which a decaying schedule reaches its `minLr` (past its warm-up): the run's steps. */
function decaySteps(config: TrainerConfig): number {
  return Math.max(config.steps, config.lrSchedule.warmupSteps + 1);
}

/** What a decaying learning-rate schedule decays over: the run's steps, or its sample budget (`--sample-budget`). */
export type LrDecaySpan = { readonly steps: number } | { readonly samples: number };

/**
 * What the run's decaying `lrSchedule` decays over ({@link scheduleLr}), recorded in each checkpoint: a run resumed
 * with another span (`--steps` or `--sample-budget` changed) trained its earlier steps on another schedule.
 * Undefined for a constant schedule, whose rate does not depend on it.
 */
export function lrDecaySpan(config: TrainerConfig, sampleBudget?: number): LrDecaySpan | undefined {
  if (config.lrSchedule.kind === 'constant') return undefined;
  return sampleBudget !== undefined ? { samples: sampleBudget } : { steps: decaySteps(config) };
}

/** "6 steps", "a budget of 400 samples". */
export function describeLrDecaySpan(span: LrDecaySpan): string {
  return 'samples' in span ? `a budget of ${span.samples} samples` : `${span.steps} step${span.steps === 1 ? '' : 's'}`;
}

/** Creates the handle's RL optimizer over the model's CURRENT trainable variables (call after any adapter load). */
export function ensureOptimizer(h: PolicyHandle): AdamW | undefined {
  if (!h.trainable) return undefined;
  h.optimizer ??= new AdamW(h.trainable.model.trainableVariables(), h.optimizerOptions as AdamWOptions);
  return h.optimizer;
}

/** The optimizer's moment buffers (AdamW keeps them private; the checkpoint needs them). */
export function optimizerMoments(opt: AdamW): {
  m: import('@tensorflow/tfjs').Variable[];
  v: import('@tensorflow/tfjs').Variable[];
} {
  const o = opt as unknown as { m: import('@tensorflow/tfjs').Variable[]; v: import('@tensorflow/tfjs').Variable[] };
  return { m: o.m, v: o.v };
}

/** The mapping level of a team: L0 one seat; L1 a policy shared by several seats; L2 LoRA per seat; L3 full per seat. */
export function mappingLevel(handles: readonly PolicyHandle[], seatCount: number): MappingLevel {
  const trainable = handles.filter((h) => h.trainable && h.seats.length > 0);
  if (trainable.length === 0) return 'frozen';
  if (seatCount === 1) return 'L0';
  if (trainable.some((h) => h.seats.length > 1)) return 'L1';
  return trainable.every((h) => h.lora) ? 'L2' : 'L3';
}

/** The memory the weights of a team's trainable policies hold (float32 bytes). */
export interface WeightMemory {
  /** Each base model held, once, with the policies that run on it (a LoRA base shared by several, a full model by one). */
  readonly bases: readonly { readonly policies: readonly string[]; readonly bytes: number }[];
  /** Each LoRA policy's own adapters. */
  readonly adapters: Readonly<Record<string, number>>;
}

/** What the weights of the trainable policies hold: the bases once each (shared LoRA bases once for all), the adapters. */
export function weightMemory(handles: readonly PolicyHandle[]): WeightMemory {
  const bases: { model: CausalLM; policies: string[]; bytes: number }[] = [];
  const adapters: Record<string, number> = {};
  for (const h of handles) {
    const lm = h.trainable;
    if (!lm) continue;
    const held = bases.find((b) => b.model.sharesBaseWith(lm.model));
    if (held) held.policies.push(h.name);
    else bases.push({ model: lm.model, policies: [h.name], bytes: lm.model.baseBytes() });
    if (lm.model.lora.size > 0) adapters[h.name] = lm.model.adapterBytes();
  }
  return { bases: bases.map(({ policies, bytes }) => ({ policies, bytes })), adapters };
}

const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MB`;

/** One line: `weights: base 2272.3 MB (planner, coder); adapters planner 4.4 MB, coder 4.4 MB`. */
export function describeWeightMemory(m: WeightMemory): string {
  const bases = m.bases.map((b) => `${mb(b.bytes)} (${b.policies.join(', ')})`).join(', ');
  const adapters = Object.entries(m.adapters).map(([name, bytes]) => `${name} ${mb(bytes)}`);
  return `weights: base${m.bases.length === 1 ? '' : 's'} ${bases || 'none'}${adapters.length ? `; adapters ${adapters.join(', ')}` : ''}`;
}

/** The run's `memory/*` metrics: `memory/bases_mb` (every base once) and `memory/adapters/<policy>_mb`. */
export function weightMemoryMetrics(m: WeightMemory): Record<string, number> {
  const out: Record<string, number> = { 'memory/bases_mb': m.bases.reduce((n, b) => n + b.bytes, 0) / 2 ** 20 };
  for (const [name, bytes] of Object.entries(m.adapters)) out[`memory/adapters/${name}_mb`] = bytes / 2 ** 20;
  return out;
}

/** Frees the trainer-owned tensors of the handles (optimizers, references); the policies are disposed by the team. */
export function disposeHandles(handles: readonly PolicyHandle[]): void {
  for (const h of handles) {
    h.optimizer?.dispose();
    h.optimizer = undefined;
    h.reference?.dispose();
    h.reference = undefined;
  }
}
