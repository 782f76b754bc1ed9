/**
 * @troupe/role-coder — `coder-v0` (writes a program; in program-output-actions mode the program's printed output is
 * the action) and `coder-proposer-v0` (always the latter: the games' proposer, the paper's tool agent).
 */
export * from './extract.js';
export * from './output.js';
export * from './coder.js';
export { default as coderModule } from './module.js';
