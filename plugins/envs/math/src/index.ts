/**
 * @troupe/env-math — the math environment (`math-v0`): a procedurally generated problem set with exact answers,
 * loaders for local GSM8K / AIME / Polaris / MATH files (JSONL or Parquet), and the layered answer checker.
 */
export * from './checker/index.js';
export * from './problems/types.js';
export * from './problems/generators.js';
export * from './problems/generated-set.js';
export * from './problems/loaders.js';
export * from './sandbox.js';
export * from './environment.js';
export * from './contribution.js';
