/** Scripted policies (`oracle`, `random`): no model, empty tokens; for tests, demonstrations and baselines. */
export * from './scripted.js';
export * from './module.js';
