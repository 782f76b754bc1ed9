/** Turn streams: one episode as a cold Observable of events (see docs/algorithm.md for the algorithm). */
export * from './events.js';
export * from './context.js';
export * from './select.js';
export * from './run-episode.js';
export * from './render-context.js';
