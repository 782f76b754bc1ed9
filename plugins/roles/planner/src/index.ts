/**
 * @troupe/role-planner — the planner role (`planner-v0`): `#### [U,R,D]` move lists.
 */
export * from './planner.js';
