/**
 * The causal LM's configuration, read from a Hugging Face `config.json` (Llama, Qwen2, Qwen3), and the presets that
 * match `torch_ref.py`'s.
 */

/** Model families this implementation runs. */
export const SUPPORTED_MODEL_TYPES = ['llama', 'qwen2', 'qwen3'] as const;

/** One of `SUPPORTED_MODEL_TYPES`. */
export type ModelType = (typeof SUPPORTED_MODEL_TYPES)[number];

/** The resolved architecture (camelCase), derived from a Hugging Face config. */
export interface LmConfig {
  /** Model family. */
  readonly modelType: ModelType;
  /** Vocabulary size (rows of the embedding). */
  readonly vocabSize: number;
  /** Model width D. */
  readonly hiddenSize: number;
  /** MLP width. */
  readonly intermediateSize: number;
  /** Number of decoder layers. */
  readonly numLayers: number;
  /** Query heads H. */
  readonly numHeads: number;
  /** Key/value heads (GQA); divides `numHeads`. */
  readonly numKvHeads: number;
  /** Per-head width. */
  readonly headDim: number;
  /** RMSNorm epsilon. */
  readonly rmsNormEps: number;
  /** RoPE base. */
  readonly ropeTheta: number;
  /** RoPE scaling (`linear` or Llama 3's `llama3`), when the config has one. */
  readonly ropeScaling?: RopeScaling;
  /** Whether the LM head shares the embedding matrix. */
  readonly tieWordEmbeddings: boolean;
  /** Whether q/k/v projections have biases (Qwen2; Llama's `attention_bias`). */
  readonly attentionBias: boolean;
  /** Whether q and k are RMS-normalised per head (Qwen3). */
  readonly qkNorm: boolean;
  /** Beginning-of-sequence id, if any. */
  readonly bosTokenId?: number;
  /** End-of-sequence ids (generation stops on any). */
  readonly eosTokenIds: readonly number[];
  /** Longest supported sequence. */
  readonly maxPositionEmbeddings: number;
}

/** Supported `rope_scaling` entries of a Hugging Face config. */
export type RopeScaling =
  | { readonly type: 'linear'; readonly factor: number }
  | {
      readonly type: 'llama3';
      readonly factor: number;
      readonly lowFreqFactor: number;
      readonly highFreqFactor: number;
      readonly originalMaxPositionEmbeddings: number;
    };

/** Shapes of the presets, identical to `torch_ref.py`'s PRESETS. */
export const PRESETS = {
  /** ~1M parameters: the size the CPU benchmarks use. */
  tiny: {
    vocab_size: 512,
    hidden_size: 128,
    intermediate_size: 384,
    num_hidden_layers: 4,
    num_attention_heads: 4,
    num_key_value_heads: 4,
    head_dim: 32,
  },
  /** ~10M parameters. */
  small: {
    vocab_size: 2048,
    hidden_size: 256,
    intermediate_size: 768,
    num_hidden_layers: 6,
    num_attention_heads: 8,
    num_key_value_heads: 4,
    head_dim: 32,
  },
} as const;

/** A preset name. */
export type PresetName = keyof typeof PRESETS;

/** Defaults filled into presets, identical to `torch_ref.py`'s DEFAULTS. */
export const PRESET_DEFAULTS = {
  model_type: 'qwen3',
  rms_norm_eps: 1e-6,
  rope_theta: 1000000.0,
  tie_word_embeddings: false,
  max_position_embeddings: 2048,
  attention_bias: false,
  bos_token_id: 1,
  eos_token_id: 2,
  torch_dtype: 'float32',
} as const;

const ARCHITECTURES: Record<ModelType, string> = {
  qwen3: 'Qwen3ForCausalLM',
  qwen2: 'Qwen2ForCausalLM',
  llama: 'LlamaForCausalLM',
};

/**
 * The Hugging Face config.json of a preset (as `torch_ref.py make-checkpoint` writes it), with optional overrides
 * (e.g. `{ model_type: 'llama', tie_word_embeddings: true }`).
 */
export function presetHfConfig(name: PresetName, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const shapes = PRESETS[name];
  if (!shapes) throw new Error(`unknown model preset '${String(name)}'; use one of ${Object.keys(PRESETS).join(', ')}`);
  const cfg: Record<string, unknown> = { ...shapes, ...PRESET_DEFAULTS, ...overrides };
  if (cfg.model_type === 'qwen2' && overrides.attention_bias === undefined) cfg.attention_bias = true;
  cfg.architectures = [ARCHITECTURES[cfg.model_type as ModelType] ?? 'Qwen3ForCausalLM'];
  return cfg;
}

function num(cfg: Record<string, unknown>, key: string, where: string, fallback?: number): number {
  const v = cfg[key] ?? fallback;
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    throw new Error(
      `${where}: '${key}' must be a number${v === undefined ? ' (missing)' : `, got ${JSON.stringify(v)}`}`,
    );
  }
  return v;
}

/**
 * The largest size this implementation accepts for each config key: far above any released model of the families it
 * runs, and low enough that a corrupt or hostile config.json is refused before anything is allocated from it.
 */
export const CONFIG_LIMITS = {
  vocab_size: 1 << 22,
  hidden_size: 1 << 16,
  intermediate_size: 1 << 18,
  num_hidden_layers: 1024,
  num_attention_heads: 1024,
  num_key_value_heads: 1024,
  head_dim: 1024,
  max_position_embeddings: 1 << 24,
} as const;

function posInt(
  cfg: Record<string, unknown>,
  key: keyof typeof CONFIG_LIMITS,
  where: string,
  fallback?: number,
): number {
  const v = num(cfg, key, where, fallback);
  if (!Number.isInteger(v) || v <= 0) throw new Error(`${where}: '${key}' must be a positive integer, got ${v}`);
  const max = CONFIG_LIMITS[key];
  if (v > max)
    throw new Error(
      `${where}: '${key}' is ${v}, over the largest supported value ${max}: the config is corrupt or not a model this loader runs`,
    );
  return v;
}

/** A finite number in (0, max]. */
function positive(cfg: Record<string, unknown>, key: string, where: string, max: number, fallback?: number): number {
  const v = num(cfg, key, where, fallback);
  if (!(v > 0 && v <= max)) throw new Error(`${where}: '${key}' must be above 0 and at most ${max}, got ${v}`);
  return v;
}

/**
 * Reads a Hugging Face config (the parsed config.json). `where` names the file in error messages.
 * Throws for unknown `model_type`, missing or inconsistent sizes, and features this implementation lacks
 * (rope scaling, MLP biases, sliding-window attention in use).
 */
export function parseHfConfig(cfg: Record<string, unknown>, where = 'config.json'): LmConfig {
  const modelType = cfg.model_type;
  if (typeof modelType !== 'string' || !(SUPPORTED_MODEL_TYPES as readonly string[]).includes(modelType)) {
    throw new Error(
      `${where}: unknown model_type ${JSON.stringify(modelType)}; supported: ${SUPPORTED_MODEL_TYPES.join(', ')}`,
    );
  }
  const mt = modelType as ModelType;
  const hiddenSize = posInt(cfg, 'hidden_size', where);
  const numHeads = posInt(cfg, 'num_attention_heads', where);
  const numKvHeads = posInt(cfg, 'num_key_value_heads', where, numHeads);
  if (numHeads % numKvHeads !== 0) {
    throw new Error(
      `${where}: num_attention_heads (${numHeads}) must be a multiple of num_key_value_heads (${numKvHeads})`,
    );
  }
  const headDim = posInt(cfg, 'head_dim', where, Math.floor(hiddenSize / numHeads));
  if (headDim % 2 !== 0) throw new Error(`${where}: head_dim must be even for RoPE, got ${headDim}`);
  const rs = cfg.rope_scaling as Record<string, unknown> | null | undefined;
  let ropeScaling: RopeScaling | undefined;
  if (rs && typeof rs === 'object') {
    const t = rs.rope_type ?? rs.type;
    const w = `${where}: rope_scaling`;
    if (t === 'linear') ropeScaling = { type: 'linear', factor: positive(rs, 'factor', w, 1e6) };
    else if (t === 'llama3') {
      ropeScaling = {
        type: 'llama3',
        factor: positive(rs, 'factor', w, 1e6),
        lowFreqFactor: positive(rs, 'low_freq_factor', w, 1e6, 1),
        highFreqFactor: positive(rs, 'high_freq_factor', w, 1e6, 4),
        originalMaxPositionEmbeddings: positive(
          rs,
          'original_max_position_embeddings',
          w,
          CONFIG_LIMITS.max_position_embeddings,
          8192,
        ),
      };
    } else if (t !== 'default') {
      throw new Error(
        `${where}: rope_scaling of type ${JSON.stringify(t)} is not supported (supported: default, linear, llama3)`,
      );
    }
  }
  if (cfg.mlp_bias === true) throw new Error(`${where}: mlp_bias=true is not supported`);
  if (cfg.use_sliding_window === true) throw new Error(`${where}: use_sliding_window=true is not supported`);
  const eos = cfg.eos_token_id;
  const eosTokenIds = Array.isArray(eos)
    ? eos.filter((x): x is number => typeof x === 'number')
    : typeof eos === 'number'
      ? [eos]
      : [];
  const bos = typeof cfg.bos_token_id === 'number' ? cfg.bos_token_id : undefined;
  const vocabSize = posInt(cfg, 'vocab_size', where);
  if (bos !== undefined && !(Number.isInteger(bos) && bos >= 0 && bos < vocabSize)) {
    throw new Error(`${where}: 'bos_token_id' is ${bos}, not a token id of the vocabulary (0 to ${vocabSize - 1})`);
  }
  const attentionBias = mt === 'qwen2' ? cfg.attention_bias !== false : cfg.attention_bias === true;
  const out: LmConfig = {
    modelType: mt,
    vocabSize,
    hiddenSize,
    intermediateSize: posInt(cfg, 'intermediate_size', where),
    numLayers: posInt(cfg, 'num_hidden_layers', where),
    numHeads,
    numKvHeads,
    headDim,
    rmsNormEps: positive(cfg, 'rms_norm_eps', where, 1, 1e-6),
    ropeTheta: positive(cfg, 'rope_theta', where, 1e12, 10000),
    tieWordEmbeddings: cfg.tie_word_embeddings === true,
    attentionBias,
    qkNorm: mt === 'qwen3',
    eosTokenIds,
    maxPositionEmbeddings: posInt(cfg, 'max_position_embeddings', where, 32768),
    ...(bos !== undefined ? { bosTokenId: bos } : {}),
    ...(ropeScaling ? { ropeScaling } : {}),
  };
  return out;
}

/** Shape of every parameter by Hugging Face name, in the order `torch_ref.py` creates them. */
export function parameterShapes(c: LmConfig): [string, number[]][] {
  const D = c.hiddenSize,
    V = c.vocabSize,
    F = c.intermediateSize,
    H = c.numHeads,
    KV = c.numKvHeads,
    hd = c.headDim;
  const out: [string, number[]][] = [['model.embed_tokens.weight', [V, D]]];
  for (let i = 0; i < c.numLayers; i++) {
    const p = `model.layers.${i}.`;
    out.push([p + 'input_layernorm.weight', [D]], [p + 'post_attention_layernorm.weight', [D]]);
    out.push([p + 'self_attn.q_proj.weight', [H * hd, D]], [p + 'self_attn.k_proj.weight', [KV * hd, D]]);
    out.push([p + 'self_attn.v_proj.weight', [KV * hd, D]], [p + 'self_attn.o_proj.weight', [D, H * hd]]);
    if (c.attentionBias) {
      out.push(
        [p + 'self_attn.q_proj.bias', [H * hd]],
        [p + 'self_attn.k_proj.bias', [KV * hd]],
        [p + 'self_attn.v_proj.bias', [KV * hd]],
      );
    }
    if (c.qkNorm) out.push([p + 'self_attn.q_norm.weight', [hd]], [p + 'self_attn.k_norm.weight', [hd]]);
    out.push(
      [p + 'mlp.gate_proj.weight', [F, D]],
      [p + 'mlp.up_proj.weight', [F, D]],
      [p + 'mlp.down_proj.weight', [D, F]],
    );
  }
  out.push(['model.norm.weight', [D]]);
  if (!c.tieWordEmbeddings) out.push(['lm_head.weight', [V, D]]);
  return out;
}

/**
 * Checks a config against the shapes of the tensors it is to be loaded with, before anything is allocated from the
 * config: the layer count, the embedding, the attention and the MLP widths. Errors name `where` (the config.json) and
 * the key that disagrees with the weights. Per-tensor shapes are checked again when the model is built.
 */
export function checkConfigAgainstTensors(
  c: LmConfig,
  tensors: ReadonlyMap<string, { readonly shape: readonly number[] }>,
  where = 'config.json',
): void {
  const layers = new Set<number>();
  for (const name of tensors.keys()) {
    const m = /^model\.layers\.(\d+)\./.exec(name);
    if (m) layers.add(Number(m[1]));
  }
  if (layers.size !== c.numLayers || (layers.size > 0 && Math.max(...layers) !== c.numLayers - 1)) {
    const have =
      layers.size === 0
        ? 'no layers'
        : `${layers.size} layer${layers.size === 1 ? '' : 's'} (model.layers.${Math.min(...layers)} to ${Math.max(...layers)})`;
    throw new Error(
      `${where}: 'num_hidden_layers' is ${c.numLayers} but the weights have ${have}; the config does not belong to these weights`,
    );
  }
  const expect = (tensor: string, shape: readonly number[], keys: string): void => {
    const t = tensors.get(tensor);
    if (!t) return; // reported, with the tensor's name, when the model is built
    if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
      throw new Error(
        `${where}: ${keys} give ${tensor} the shape [${shape.join(', ')}] but the weights have [${t.shape.join(', ')}]; the config does not belong to these weights`,
      );
    }
  };
  expect(
    'model.embed_tokens.weight',
    [c.vocabSize, c.hiddenSize],
    `'vocab_size' ${c.vocabSize} and 'hidden_size' ${c.hiddenSize}`,
  );
  expect(
    'model.layers.0.self_attn.q_proj.weight',
    [c.numHeads * c.headDim, c.hiddenSize],
    `'num_attention_heads' ${c.numHeads} and 'head_dim' ${c.headDim}`,
  );
  expect(
    'model.layers.0.self_attn.k_proj.weight',
    [c.numKvHeads * c.headDim, c.hiddenSize],
    `'num_key_value_heads' ${c.numKvHeads} and 'head_dim' ${c.headDim}`,
  );
  expect(
    'model.layers.0.mlp.gate_proj.weight',
    [c.intermediateSize, c.hiddenSize],
    `'intermediate_size' ${c.intermediateSize}`,
  );
}
