/**
 * @troupe/kernel — read the folders in data-flow order:
 * contracts → plugins → team → episode → algorithms → rollout → run-folder → runtime.
 *
 * The kernel is light (no tfjs). The causal LM, tokenizers, backends and checkpoints are in `@troupe/lm`, the
 * AT-GRPO trainer in `@troupe/trainer`, the paper-table runner in `@troupe/experiment`; policies are plugins.
 */
import 'reflect-metadata';
export * from './contracts/index.js';
export * from './util/index.js';
export * from './di.js';
export * from './services/index.js';
export * from './plugins/index.js';
export * from './team/index.js';
export * from './episode/index.js';
export * from './rollout/index.js';
export * from './run-folder/index.js';
export * from './algorithms/index.js';
export * from './runtime/index.js';
