/**
 * @troupe/role-solver — the solver role (`solver-v0`): reasons and gives the final answer in `\boxed{}`.
 */
export * from './solver.js';
