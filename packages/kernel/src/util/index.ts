export * from './rng.js';
export * from './hash.js';
export * from './splits.js';
export * from './atomic.js';
export * from './folder-lock.js';
export * from './read-bounded.js';
