/**
 * @troupe/kernel/model — the trainable policy: tfjs backends, the Llama/Qwen causal LM, tokenizers, checkpoints.
 */
export * from './policy/backend/index.js';
export * from './policy/tokenizer/index.js';
export * from './policy/lm/index.js';
export * from './checkpoint/index.js';
export * from './trainer/index.js';
