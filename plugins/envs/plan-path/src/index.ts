/**
 * @troupe/env-plan-path — the Plan-Path environment (`plan-path-v0`) and its helpers.
 */
export * from './grid.js';
export * from './config.js';
export * from './dynamics.js';
export * from './instance.js';
export * from './environment.js';
export * from './oracle-program.js';
