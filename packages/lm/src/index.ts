/**
 * @troupe/lm — the trainable language model: tfjs backends, checkpoint files, tokenizers, the Llama/Qwen causal LM
 * (generation, training ops, Hugging Face checkpoint folders), the `tfjs-causal-lm` policy and the model benchmarks.
 * Read the folders in data-flow order: backend → checkpoint → tokenizer → lm → policy → bench.
 */
export * from './model.js';
export * from './tokenizer/index.js';
export * from './policy/causal-lm.js';
export * from './bench/bench.js';
export * from './bench/bench-checkpoint.js';
