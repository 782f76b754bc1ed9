/**
 * @troupe/experiment — the paper's table at our scale: the arms derived from a base team spec (arms.ts), the
 * runner of arms × games × seeds as child processes of the troupe CLI (runner.ts), and the table and its plots
 * (table.ts). Light: no tfjs (the children load it).
 */
export * from './arms.js';
export * from './results.js';
export * from './runner.js';
export * from './table.js';
