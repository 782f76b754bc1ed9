export * from './moves.js';
