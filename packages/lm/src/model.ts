/**
 * @troupe/lm/model — the model without tokenizers or the policy: backends, checkpoint files and the causal LM with its
 * training steps and Hugging Face folders. It never loads @huggingface/transformers (whose native add-ons must not load
 * in worker threads), so the trainer's update and warm-start workers import this entry.
 */
export * from './backend/index.js';
export * from './checkpoint/index.js';
export * from './lm/index.js';
