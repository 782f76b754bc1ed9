import type { ChatMessage, JsonSchema, Move, Rng } from './common.js';
import type { Environment } from './environment.js';
import type { OutputGrammar, Role, SeatContext } from './role.js';

/** Contribution point for policies (the tfjs causal LM, an OpenAI-compatible server, scripted policies). */
export const PolicyContribution = Symbol.for('troupe.PolicyContribution');

/** Explicit sampling parameters; every seat states its own (no hidden defaults). */
export interface SamplingParams {
  /** Softmax temperature; 0 means greedy. */
  readonly temperature: number;
  /** Nucleus sampling mass in (0, 1]; 1 disables it. */
  readonly topP: number;
  /** Keep the k most likely tokens; 0 disables it. */
  readonly topK: number;
  /** Maximum number of new tokens. */
  readonly maxTokens: number;
  /** Generation stops after any of these strings (which are kept in the text). */
  readonly stop?: readonly string[];
}

/** What scripted policies may look at: the true state of the episode (a model never sees it). */
export interface ScriptedContext {
  /** The environment. */
  readonly environment: Environment;
  /** The current state. */
  readonly state: unknown;
  /** The role that will parse the text. */
  readonly role: Role;
  /** The seat. */
  readonly seat: SeatContext;
}

/** One generation request: one prompt, `n` samples from it. */
export interface GenerationRequest {
  /** The chat messages (the policy applies its chat template). */
  readonly messages: readonly ChatMessage[];
  /** Sampling parameters. */
  readonly sampling: SamplingParams;
  /** Number of samples from this prompt (the tree sampler's K). */
  readonly n: number;
  /** Seed of this request; the same seed and prompt give the same samples on the same backend. */
  readonly seed: number;
  /** Output grammar to enforce, when the policy supports constrained decoding. */
  readonly grammar?: OutputGrammar;
  /**
   * The temperature of the distribution the returned log-probs are of; default the sampling temperature (1 when
   * greedy). The tree's greedy branch (`algorithm.greedyBranch`) decodes at temperature 0 and asks for log-probs at its
   * seat's sampling temperature, the distribution its group is trained at. The tfjs model honours it; a policy that
   * cannot may ignore it (the log-probs are a check only: the trainer recomputes them).
   */
  readonly logprobTemperature?: number;
  /** For scripted policies only. */
  readonly scripted?: ScriptedContext;
}

/** One sampled completion. */
export interface Completion {
  /** The generated text. */
  readonly text: string;
  /** Token ids of the prompt (empty for policies without a tokenizer). */
  readonly promptIds: readonly number[];
  /** Token ids of the completion. */
  readonly tokenIds: readonly number[];
  /**
   * Natural-log probability of each completion token under the sampling policy (same length as `tokenIds`): for the
   * tfjs model, its softmax at the sampling temperature (temperature 1 when greedy), before top-k/top-p and grammar
   * masks; an HTTP server reports what it reports.
   */
  readonly logprobs: readonly number[];
  /** Why generation stopped. */
  readonly finishReason: 'stop' | 'length' | 'abort';
  /**
   * The move `text` stands for, given by a scripted policy that chose an action and rendered it (oracle play,
   * warm-start demonstrations): the episode steps it as given instead of parsing the text. Model policies leave it
   * out; so do the `oracle` and `random` policy kinds, whose text goes through the role's parser like a model's.
   */
  readonly move?: Move;
}

/** Options of one {@link Policy.generate} call. */
export interface GenerateCallOptions {
  /** Aborts the call. */
  readonly signal?: AbortSignal;
  /** The requests were merged deterministically from several callers: decoding them as one batch is allowed. */
  readonly batch?: boolean;
}

/** Anything that answers prompts. */
export interface Policy {
  /** Name of the policy in the team spec (e.g. `shared`, `planner`). */
  readonly name: string;
  /** Contribution id it was created from. */
  readonly kind: string;
  /** Monotone version, incremented by every update; tags every sample. Inference-only policies stay at 0. */
  readonly version: number;
  /**
   * Samples `n` completions per request. Resolves with one array per request, in order. Rejects with an
   * `AbortError` when `signal` fires. `batch: true` says the caller merged these requests in an order that does not
   * depend on timing (lockstep batching, rollout/lockstep.ts): a policy may decode them together as one batch, even
   * where that changes float rounding against decoding each alone.
   */
  generate(requests: readonly GenerationRequest[], options?: GenerateCallOptions): Promise<Completion[][]>;
  /** Releases resources (tensors, workers, sockets). */
  dispose?(): void | Promise<void>;
}

/** Creation context for policies. */
export interface PolicyCreateContext {
  /** Directory of the team spec, to resolve relative paths. */
  readonly baseDir: string;
  /** Seed for anything random inside the policy. */
  readonly seed: number;
  /** A deterministic random stream for this policy. */
  readonly rng: Rng;
}

/** A factory for one policy kind (e.g. `oracle`, `random`, `tfjs-causal-lm`, `openai`). */
export interface PolicyContribution {
  /** The kind, as written in the team spec's `policies.<name>.kind`. */
  readonly id: string;
  /** One line for `troupe plugins ls`. */
  readonly description: string;
  /** JSON schema of `policies.<name>` minus `kind`. */
  readonly configSchema: JsonSchema;
  /** Builds a policy named `name`. */
  create(name: string, config: Record<string, unknown>, context: PolicyCreateContext): Policy | Promise<Policy>;
}

/** Re-exported so scripted policies can type their moves. */
export type { Move };
