/**
 * @troupe/kernel — read the folders in data-flow order:
 * contracts → plugins → team → episode → rollout → algorithms → policy → trainer → checkpoint.
 *
 * This entry point is light (no tfjs). The trainable model, tokenizers, backends and checkpoints are in
 * `@troupe/kernel/model`, imported only by the commands that need them.
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
export * from './algorithms/index.js';
export * from './policy/scripted/index.js';
export * from './runtime/index.js';
// the trainer's settings (light: a schema and its checks), for `troupe validate`; the trainer itself is in ./model
export { resolveTrainerConfig, TrainerConfigError, TRAINER_CONFIG_SCHEMA, type TrainerConfig } from './trainer/config.js';
