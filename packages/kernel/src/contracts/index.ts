export * from './common.js';
export * from './environment.js';
export * from './role.js';
export * from './reward.js';
export * from './policy.js';
export * from './manifest.js';
export * from './services.js';
