/**
 * The trainable `tfjs-causal-lm` policy: a `CausalLM` + tokenizer behind the `Policy` contract, with log-prob
 * recomputation, LoRA adapters and saving; @troupe/trainer updates its weights. Contributed as
 * `CausalLmPolicyContribution`, which @troupe/policy-causal-lm binds.
 */
import { isAbsolute, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import {
  injectable,
  injectParameters,
  optionalService,
  TokenizerCache,
  type PolicyContribution,
  type Completion,
  type GenerateCallOptions,
  type GenerationRequest,
  type Policy,
  type PolicyCreateContext,
  type JsonSchema,
} from '@troupe/kernel';
import { initBackend, type BackendName, type BackendReport } from '../backend/index.js';
import { tokenizerCache, type Tokenizer } from '../tokenizer/index.js';
import { loadCheckpoint, loadLoraAdapter, saveCheckpoint, saveLoraAdapter } from '../lm/hf-checkpoint.js';
import { CausalLM, type LoraConfig } from '../lm/model.js';
import { presetHfConfig, type PresetName } from '../lm/config.js';
import { generateBatch } from '../lm/generate.js';
import { SharedBaseBatcher } from '../lm/adapters.js';
import { compileGrammar, GrammarError } from '../lm/grammar.js';
import { recomputeLogprobs, type AdamWOptions, type SequencePair } from '../lm/train.js';

/** Config of a `tfjs-causal-lm` policy (the team spec's `policies.<name>` minus `kind`). */
export interface CausalLmPolicyConfig {
  /** Hugging Face-layout checkpoint folder (relative to the team spec). Exclusive with `preset`. */
  readonly model?: string;
  /** A randomly initialised preset (`tiny`, `small`) with the tiny byte-level tokenizer by default. */
  readonly preset?: PresetName;
  /** Model family of the preset. Default `qwen3`. */
  readonly modelType?: 'qwen3' | 'qwen2' | 'llama';
  /** Tokenizer folder, or `tiny` / `qwen3`. Default: the model folder, or `tiny` for presets. */
  readonly tokenizer?: string;
  /** tfjs backend (`auto` by default; `TROUPE_BACKEND` applies when absent). */
  readonly backend?: BackendName | 'auto';
  /** Seed of a preset's initial weights and of LoRA init. Default: the creation context's seed. */
  readonly seed?: number;
  /** Attach fresh LoRA adapters; only they train. */
  readonly lora?: { readonly r: number; readonly alpha: number; readonly targetModules: readonly string[] };
  /** Load a PEFT LoRA adapter folder (relative to the team spec). */
  readonly adapter?: string;
  /** This policy's own AdamW settings for the trainer's updates, over the spec's `algorithm` ones. */
  readonly optimizer?: AdamWOptions;
  /**
   * Decode all requests of a `generate` call in one left-padded batch (faster; float rounding may then depend on
   * the batch's composition). Default false: one request at a time, bit-for-bit reproducible.
   */
  readonly batchPrompts?: boolean;
}

/** JSON schema of `CausalLmPolicyConfig`. */
export const causalLmPolicyConfigSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  oneOf: [{ required: ['model'] }, { required: ['preset'] }],
  properties: {
    model: { type: 'string', description: 'Hugging Face-layout checkpoint folder' },
    preset: { enum: ['tiny', 'small'] },
    modelType: { enum: ['qwen3', 'qwen2', 'llama'], default: 'qwen3' },
    tokenizer: { type: 'string' },
    backend: { enum: ['auto', 'tensorflow-gpu', 'tensorflow', 'webgpu', 'wasm', 'cpu'] },
    seed: { type: 'integer', minimum: 0, maximum: 4294967295 },
    lora: {
      type: 'object',
      additionalProperties: false,
      required: ['r', 'alpha', 'targetModules'],
      properties: {
        r: { type: 'integer', minimum: 1, maximum: 4096 },
        alpha: { type: 'number', exclusiveMinimum: 0, maximum: 1e6 },
        targetModules: { type: 'array', items: { type: 'string' }, minItems: 1 },
      },
    },
    adapter: { type: 'string' },
    optimizer: {
      type: 'object',
      additionalProperties: false,
      required: ['lr'],
      properties: {
        lr: {
          oneOf: [
            { type: 'number', exclusiveMinimum: 0, maximum: 1 },
            {
              type: 'object',
              additionalProperties: false,
              required: ['kind', 'lr'],
              properties: {
                kind: { enum: ['constant', 'linear', 'cosine'] },
                lr: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
                warmupSteps: { type: 'integer', minimum: 0, maximum: 1e7 },
                totalSteps: { type: 'integer', minimum: 1, maximum: 1e7 },
                minLr: { type: 'number', minimum: 0, maximum: 1 },
              },
            },
          ],
        },
        beta1: { type: 'number', minimum: 0, exclusiveMaximum: 1 },
        beta2: { type: 'number', minimum: 0, exclusiveMaximum: 1 },
        eps: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
        weightDecay: { type: 'number', minimum: 0, maximum: 10 },
        maxGradNorm: { type: 'number', minimum: 0, maximum: 1e6 },
      },
    },
    batchPrompts: { type: 'boolean', default: false },
  },
};

const warnedPatterns = new Set<string>();

/** The base a LoRA policy runs on when other LoRA policies of the same base share it (see {@link sharedBase}). */
export interface SharedBaseLease {
  /** What identifies the base: the checkpoint folder or the preset, its seed, and the backend. */
  readonly key: string;
  /** Decodes the lockstep calls of every policy on this base as one batch. */
  readonly batcher: SharedBaseBatcher;
  /** The policies on this base now (names, in creation order). */
  readonly policies: readonly string[];
  /** Gives the base back; the last policy to do so frees it. */
  release(): void;
}

/** One shared base: its loading (once), the batcher over it, the policies on it. */
interface SharedBaseEntry {
  readonly ready: Promise<{ root: CausalLM; batcher: SharedBaseBatcher }>;
  readonly policies: string[];
}

/**
 * The bases of the process's LoRA policies (`lora:` or `adapter:`), by {@link SharedBaseLease.key}: every LoRA policy
 * of one base (the same checkpoint folder, or the same preset, model type and seed, on the same backend) runs on ONE
 * copy of its frozen weights (`CausalLM.shareBase`), with its own adapters, and their lockstep calls decode together.
 */
const sharedBases = new Map<string, SharedBaseEntry>();

/**
 * A model for policy `name` on the shared base `key` (loaded with `load` by its first policy), with no adapters yet,
 * and the lease the policy gives back when it is disposed.
 */
async function sharedBase(
  key: string,
  name: string,
  load: () => Promise<CausalLM>,
): Promise<{ model: CausalLM; lease: SharedBaseLease }> {
  let entry = sharedBases.get(key);
  if (!entry) {
    const ready = load().then((root) => ({ root, batcher: new SharedBaseBatcher(root) }));
    entry = { ready, policies: [] };
    sharedBases.set(key, entry);
    const mine = entry;
    ready.catch(() => {
      if (sharedBases.get(key) === mine) sharedBases.delete(key);
    });
  }
  const e = entry;
  e.policies.push(name);
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    e.policies.splice(e.policies.indexOf(name), 1);
    if (e.policies.length > 0) return;
    if (sharedBases.get(key) === e) sharedBases.delete(key);
    void e.ready.then(
      ({ root }) => root.dispose(),
      () => undefined,
    );
  };
  try {
    const { root, batcher } = await e.ready;
    return { model: root.shareBase(), lease: { key, batcher, policies: e.policies, release } };
  } catch (err) {
    release();
    throw err;
  }
}

/** The trainable tfjs causal-LM policy. */
/**
 * Brand of every {@link CausalLmPolicy}, registered globally so that it holds across copies of this module: the
 * `tfjs-causal-lm` plugin and the trainer may load @troupe/lm apart (two installs, or ESM and CommonJS under a test
 * runner), where `instanceof` would say no.
 */
const CAUSAL_LM_POLICY: unique symbol = Symbol.for('@troupe/lm CausalLmPolicy') as never;

/** Whether `policy` is a trainable {@link CausalLmPolicy} (from any copy of @troupe/lm). */
export function isCausalLmPolicy(policy: unknown): policy is CausalLmPolicy {
  return (
    typeof policy === 'object' &&
    policy !== null &&
    (policy as { [CAUSAL_LM_POLICY]?: unknown })[CAUSAL_LM_POLICY] === true
  );
}

export class CausalLmPolicy implements Policy {
  /** See {@link isCausalLmPolicy}. */
  readonly [CAUSAL_LM_POLICY] = true;
  /** Contribution id. */
  readonly kind = 'tfjs-causal-lm';
  /** Incremented by every update of its weights (the trainer's warm start and RL steps). */
  version = 0;

  /** Wraps a loaded model and tokenizer. */
  constructor(
    /** Policy name in the team spec. */
    readonly name: string,
    /** The model (owned: disposed with the policy). */
    readonly model: CausalLM,
    /** The tokenizer. */
    readonly tokenizer: Tokenizer,
    /**
     * The trainer's optimizer settings of this policy, the backend it runs on, batched decoding, and the base it
     * shares with other LoRA policies (released on dispose).
     */
    readonly settings: {
      optimizer?: AdamWOptions;
      backend?: BackendReport;
      batchPrompts?: boolean;
      sharedBase?: SharedBaseLease;
    } = {},
  ) {
    if (tokenizer.vocabSize > model.config.vocabSize) {
      throw new Error(
        `policy '${name}': the tokenizer (${tokenizer.dir}) has ${tokenizer.vocabSize} tokens but the model's vocab_size is ${model.config.vocabSize}`,
      );
    }
  }

  /**
   * Memory its weights hold, in bytes: the base (float32; held once for all the policies in `sharedWith`, itself
   * included) and its own LoRA adapters.
   */
  memory(): { base: number; adapters: number; sharedWith: readonly string[] } {
    return {
      base: this.model.baseBytes(),
      adapters: this.model.adapterBytes(),
      sharedWith: [...(this.settings.sharedBase?.policies ?? [this.name])],
    };
  }

  /** Prompt token ids for chat messages (chat template + generation prompt). */
  promptIds(messages: GenerationRequest['messages']): number[] {
    return this.tokenizer.encode(this.tokenizer.applyChatTemplate(messages));
  }

  /**
   * Samples `n` completions per request (see `Policy.generate`). By default each request decodes on its own (its
   * `n` samples batched), so results are bit-for-bit independent of how callers group requests. With
   * `batchPrompts`, or when the caller merged the requests deterministically (`options.batch`, lockstep batching),
   * all requests decode together in one left-padded batch: several times faster, but float rounding (and so, rarely,
   * a sampled token) can then depend on which prompts share the batch.
   */
  async generate(requests: readonly GenerationRequest[], options: GenerateCallOptions = {}): Promise<Completion[][]> {
    const prompts = requests.map((req) => this.promptIds(req.messages));
    const items = requests.map((req, i) => {
      let grammar = req.grammar;
      if (grammar && grammar.kind === 'regex') {
        try {
          compileGrammar(grammar);
        } catch (err) {
          if (!(err instanceof GrammarError)) throw err;
          if (!warnedPatterns.has(grammar.pattern)) {
            warnedPatterns.add(grammar.pattern);
            process.emitWarning(
              `policy '${this.name}': ${err.message}; sampling without constraints for this grammar`,
              'TroupeGrammarWarning',
            );
          }
          grammar = undefined;
        }
      }
      return {
        promptIds: prompts[i]!,
        options: {
          maxNewTokens: req.sampling.maxTokens,
          temperature: req.sampling.temperature,
          topP: req.sampling.topP,
          topK: req.sampling.topK,
          n: req.n,
          seed: req.seed,
          ...(req.sampling.stop ? { stop: req.sampling.stop } : {}),
          ...(req.logprobTemperature !== undefined ? { logprobTemperature: req.logprobTemperature } : {}),
          ...(grammar ? { grammar } : {}),
        },
      };
    });
    const shared = { tokenizer: this.tokenizer, ...(options.signal ? { signal: options.signal } : {}) };
    let samples: Awaited<ReturnType<typeof generateBatch>>;
    const lease = this.settings.sharedBase;
    // lockstep calls of the LoRA policies on one base decode together, each row through its policy's adapters
    if (options.batch && lease) samples = await lease.batcher.generate(this.model, items, shared);
    else if (this.settings.batchPrompts || options.batch) samples = await generateBatch(this.model, items, shared);
    else {
      samples = [];
      for (const it of items) samples.push((await generateBatch(this.model, [it], shared))[0]!);
    }
    return samples.map((group, i) =>
      group.map((s) => ({
        text: s.text,
        promptIds: prompts[i]!,
        tokenIds: s.tokenIds,
        logprobs: s.logprobs,
        finishReason: s.finishReason,
      })),
    );
  }

  /** Log-prob of each completion token under the current weights. */
  recomputeLogprobs(pairs: readonly SequencePair[], options: { batchSize?: number } = {}): Promise<number[][]> {
    return recomputeLogprobs(this.model, pairs, { ...options, padId: this.tokenizer.padTokenId ?? 0 });
  }

  /** Saves the full model (HF layout, tokenizer copied), or only the LoRA adapter (PEFT layout) when attached. */
  async save(dir: string): Promise<void> {
    if (this.model.lora.size > 0) await saveLoraAdapter(dir, this.model);
    else await saveCheckpoint(dir, this.model, { tokenizerDir: this.tokenizer.dir });
  }

  /** Frees the model's tensors (a shared base once no policy holds it). */
  dispose(): void {
    this.model.dispose();
    this.settings.sharedBase?.release();
  }
}

/**
 * Builds a `CausalLmPolicy` from a config; relative paths resolve against `baseDir`. Its tokenizer comes from
 * `tokenizers` (default: this package's cache, the process's `TokenizerCache`).
 */
export async function createCausalLmPolicy(
  name: string,
  config: CausalLmPolicyConfig,
  context: Pick<PolicyCreateContext, 'baseDir' | 'seed'>,
  tokenizers: TokenizerCache<Tokenizer> = tokenizerCache,
): Promise<CausalLmPolicy> {
  const where = `policies.${name}`;
  const abs = (p: string): string => (isAbsolute(p) ? p : resolve(context.baseDir, p));
  if (!config.model === !config.preset)
    throw new Error(`${where}: give exactly one of 'model' (a checkpoint folder) or 'preset' (tiny, small)`);
  const backend = await initBackend(config.backend ? { backend: config.backend } : {});
  const seed = config.seed ?? context.seed;
  let load: () => Promise<CausalLM>;
  let baseKey: string;
  let tokDir: string;
  if (config.model) {
    const dir = abs(config.model);
    if (!existsSync(dir)) throw new Error(`${where}.model: checkpoint folder ${dir} does not exist`);
    load = () => loadCheckpoint(dir);
    baseKey = `model ${dir}`;
    tokDir = config.tokenizer
      ? config.tokenizer === 'tiny' || config.tokenizer === 'qwen3'
        ? config.tokenizer
        : abs(config.tokenizer)
      : dir;
  } else {
    const modelType = config.modelType ?? 'qwen3';
    load = () => Promise.resolve(CausalLM.random(presetHfConfig(config.preset!, { model_type: modelType }), seed));
    baseKey = `preset ${config.preset} ${modelType} seed ${seed}`;
    tokDir = config.tokenizer
      ? config.tokenizer === 'tiny' || config.tokenizer === 'qwen3'
        ? config.tokenizer
        : abs(config.tokenizer)
      : 'tiny';
  }
  if (config.lora && config.adapter)
    throw new Error(`${where}: give at most one of 'lora' (fresh adapters) and 'adapter' (a saved one)`);
  // A LoRA policy never changes its base: it runs on the one copy every LoRA policy of that base shares.
  let model: CausalLM;
  let lease: SharedBaseLease | undefined;
  if (config.lora || config.adapter)
    ({ model, lease } = await sharedBase(`${baseKey} on ${backend.backend}`, name, load));
  else model = await load();
  try {
    const tokenizer = await tokenizers.load(tokDir);
    if (config.lora) model.addLora(config.lora as LoraConfig, seed);
    if (config.adapter) await loadLoraAdapter(abs(config.adapter), model);
    return new CausalLmPolicy(name, model, tokenizer, {
      ...(config.optimizer ? { optimizer: config.optimizer } : {}),
      ...(config.batchPrompts ? { batchPrompts: true } : {}),
      ...(lease ? { sharedBase: lease } : {}),
      backend,
    });
  } catch (err) {
    model.dispose();
    lease?.release();
    throw err;
  }
}

/** The `tfjs-causal-lm` policy contribution, injected with the process's tokenizer cache. */
@injectable()
export class CausalLmPolicyContribution implements PolicyContribution {
  readonly id = 'tfjs-causal-lm';
  readonly description = 'Trainable Llama/Qwen causal LM in tfjs (wasm/cpu/tfjs-node), HF checkpoints, LoRA';
  readonly configSchema = causalLmPolicyConfigSchema;

  /** @param tokenizers the process's tokenizer cache (default: this package's) */
  constructor(private readonly tokenizers: TokenizerCache<Tokenizer> = tokenizerCache) {}

  create(name: string, config: Record<string, unknown>, context: PolicyCreateContext): Promise<CausalLmPolicy> {
    return createCausalLmPolicy(name, config as CausalLmPolicyConfig, context, this.tokenizers);
  }
}
injectParameters(CausalLmPolicyContribution, [optionalService(TokenizerCache)]);
