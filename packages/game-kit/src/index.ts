/**
 * @troupe/game-kit — what proposer/executor games share: the game skeleton (seats, turn order, records, signals,
 * observations), the `moves` action type and its grid games' layer, config reading, seeded instance streams with
 * content-hash splits, the answer line and user message the game roles read and write, and tool details.
 */
export * from './values.js';
export * from './grid.js';
export * from './moves.js';
export * from './config.js';
export * from './instances.js';
export * from './game.js';
export * from './moves-game.js';
export * from './search.js';
export * from './answer-line.js';
export * from './answer-role.js';
export * from './user-message.js';
export * from './tool-details.js';
