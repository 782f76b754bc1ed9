/**
 * The trainable tfjs causal LM (Llama / Qwen2 / Qwen3): config, model, generation, constrained decoding, training
 * primitives, and its Hugging Face checkpoint folders. The `tfjs-causal-lm` policy over it is in `policy/`.
 */
export * from './config.js';
export { mm, linear, rmsNorm, embed, oneHotF32, silu, ropeInvFreq } from './ops.js';
export * from './model.js';
export * from './grammar.js';
export * from './generate.js';
export * from './adapters.js';
export * from './train.js';
export { DataParallel, sumGradients, shares, type PartLoss, type LossModule } from './data-parallel.js';
export * from './hf-checkpoint.js';
