export * from './user-message.js';
export * from './answer-line.js';
