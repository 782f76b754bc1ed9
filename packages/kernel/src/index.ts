/**
 * @troupe/kernel — read the folders in data-flow order:
 * contracts → plugins → team → episode → rollout → algorithms → policy → trainer → checkpoint.
 */
import 'reflect-metadata';
export * from './contracts/index.js';
export * from './util/index.js';
export * from './di.js';
export * from './team/index.js';
