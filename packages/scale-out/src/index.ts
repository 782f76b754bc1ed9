export { Dispatcher, QueueUnavailableError } from './dispatcher.js';
export { startWorker } from './worker.js';
/** Thrown by `process`, fails the job at once, without its remaining attempts. */
export { UnrecoverableError } from 'bullmq';
export { RedisServer, type RedisServerOptions } from './redis-server.js';
export type * from './types.js';
