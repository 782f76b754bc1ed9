export * from './compose.js';
export * from './oracle-play.js';
