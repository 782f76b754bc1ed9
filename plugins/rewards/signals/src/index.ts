/**
 * @troupe/reward-signals — reward terms read from environment signals (`signals-v0`).
 */
export * from './signals.js';
