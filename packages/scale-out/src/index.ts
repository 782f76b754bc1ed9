export { Dispatcher, QueueUnavailableError } from './dispatcher.js';
export { startWorker } from './worker.js';
export { RedisServer, type RedisServerOptions } from './redis-server.js';
export type * from './types.js';
