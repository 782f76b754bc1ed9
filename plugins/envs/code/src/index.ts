/**
 * @troupe/env-code — `code-v0`: stdin/stdout programming problems for a coder/tester team, with sandboxed execution,
 * a shipped problem set and loaders for APPS, CodeContests and LiveCodeBench files.
 */
export * from './types.js';
export * from './compare.js';
export * from './config.js';
export * from './loaders.js';
export * from './dataset.js';
export * from './runner.js';
export * from './environment.js';
export { default as codeModule } from './module.js';
