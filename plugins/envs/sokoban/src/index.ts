/**
 * @troupe/env-sokoban — the Sokoban environment (`sokoban-v0`) and its helpers.
 */
export * from './board.js';
export * from './config.js';
export * from './instance.js';
export * from './environment.js';
export * from './oracle-program.js';
