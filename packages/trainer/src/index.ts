/**
 * @troupe/trainer — AT-GRPO / grpo-naive training steps, warm start (SFT on oracle demonstrations), evaluation with
 * Wilson intervals, crash-safe checkpoints and resume, and the run report (`@troupe/trainer/report`, light: no tfjs).
 * The spec's `algorithm` settings are checked by the kernel (`resolveTrainerConfig`); the model is @troupe/lm's.
 */
export * from './loss.js';
export * from './policies.js';
export * from './sft-run.js';
export * from './sft.js';
export * from './instances.js';
export * from './evaluate.js';
export * from './compare.js';
export { samplerGap } from './ppo-update.js';
export * from './state.js';
export * from './timing.js';
export * from './trainer.js';
export * from './trainer-setup.js';
export * from './trainer-types.js';
export * from './run-folder.js';
export * from './policy-updates.js';
export * from './rollouts.js';
export * from './metrics.js';
export * from './defaults.js';
export * from './report.js';
export * from './distributed/index.js';
