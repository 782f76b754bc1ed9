/**
 * @troupe/policy-openai — `kind: openai` policies: a model served by any OpenAI-compatible server.
 */
export * from './config.js';
export * from './response.js';
export * from './policy.js';
export * from './contribution.js';
export { default as openAiModule } from './module.js';
