/**
 * @troupe/testing — conformance suites every Troupe plugin runs (like Gymnasium's `check_env` and PettingZoo's
 * `api_test`). Each suite comes in two forms: `xConformance(...)` registers mocha tests (call it at the top level
 * of a test file), and `checkXConformance(...)` runs the same checks and resolves with the list of failures (for the
 * CLI). `xChecks(...)` gives the checks themselves.
 */
export * from './core.js';
export * from './schema.js';
export * from './environment.js';
export * from './single-seat.js';
export * from './oracle-program.js';
export * from './tool-proposal.js';
export * from './role.js';
export * from './reward.js';
export * from './module.js';
