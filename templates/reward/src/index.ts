/** Public API of the plugin, for other packages and tests. The kernel loads `./module.js` instead. */
export * from './reward.js';
export { default as module } from './module.js';
