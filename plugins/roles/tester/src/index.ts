/** @troupe/role-tester — `tester-v0`: writes unit tests (input and expected output) as fenced blocks. */
export * from './tester.js';
export { default as testerModule } from './module.js';
