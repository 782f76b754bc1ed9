/** Rollouts: many episodes with bounded concurrency, joined into samples / groups / episodes, traces and summaries. */
export * from './run-episodes.js';
export * from './records.js';
export * from './trace.js';
export * from './summary.js';
export * from './lockstep.js';
