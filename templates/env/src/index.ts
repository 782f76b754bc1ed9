/** Public API of the plugin, for other packages and tests. The kernel loads `./module.js` instead. */
export * from './environment.js';
export { default as module } from './module.js';
