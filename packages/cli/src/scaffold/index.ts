/** Scaffolding of plugin packages and team projects (`troupe new`) and plugin testing (`troupe test`). */
export * from './names.js';
export * from './scaffold.js';
export * from './plugin-test.js';
