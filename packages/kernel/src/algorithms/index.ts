/** Algorithms over rollouts: group-relative advantages (AT-GRPO and the grpo-naive baseline). */
export * from './advantages.js';
