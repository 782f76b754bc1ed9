/**
 * @troupe/env-sudoku — the Sudoku environment (`sudoku-v0`), its generator and solver, and the `sudoku-filler-v0` role.
 */
export * from './grid.js';
export * from './config.js';
export * from './instance.js';
export * from './environment.js';
export * from './oracle-program.js';
export * from './role.js';
