/**
 * The trainer: AT-GRPO / grpo-naive training steps, warm start (SFT on oracle demonstrations), evaluation with
 * Wilson intervals, crash-safe checkpoints and resume, and the run report. Needs tfjs: exported from
 * `@troupe/kernel/model`.
 */
export * from './config.js';
export * from './loss.js';
export * from './policies.js';
export * from './sft.js';
export * from './instances.js';
export * from './evaluate.js';
export * from './compare.js';
export { samplerGap } from './ppo-update.js';
export * from './state.js';
export * from './timing.js';
export * from './trainer.js';
export * from './defaults.js';
export * from './report.js';
