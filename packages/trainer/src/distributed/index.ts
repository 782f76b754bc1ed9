/** The distributed engine: rollout jobs, policy versions, the trainer's engine and the worker (docs/scale-out.md). */
export * from './job.js';
export * from './versions.js';
export * from './play-job.js';
export * from './engine.js';
export * from './worker.js';
export * from './redis-check.js';
export * from './start.js';
export * from './update-job.js';
export * from './remote-updates.js';
