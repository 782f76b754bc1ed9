export * from './user-message.js';
