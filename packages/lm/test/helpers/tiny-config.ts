/** The tiny Qwen3 config (two layers, grouped-query attention, per-head q/k norms) of the checkpoint and generation tests. */
export const TINY_QWEN3 = {
  model_type: 'qwen3',
  vocab_size: 300,
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 8,
  eos_token_id: 2,
  bos_token_id: 1,
};

/** A GQA config (4 query heads on 2 kv heads), small enough for a quick test: the parity tests' checkpoints. */
export const GQA_SMALL = {
  vocab_size: 512,
  hidden_size: 64,
  intermediate_size: 128,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 16,
};
